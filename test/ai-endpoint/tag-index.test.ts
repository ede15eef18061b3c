import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTagIndex, type TagIndex } from '../../shared/ai/index.js';
import { createLogger } from '../../shared/logger.js';
import { trackTagIndex } from '../../workers/ai/tag-index-tracker.js';
import { tagIndexStore } from '../../workers/ai/tag-index-store.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/** Two workers sharing one Redis: what one publishes, the other loads, once per version. */
describe('tag index published in Redis', () => {
  let runtime: TestRuntime;
  const log = createLogger('silent');

  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(async () => {
    await runtime?.close();
  });

  const engineRecorder = () => {
    const loaded: TagIndex[] = [];
    return { loaded, setTagIndex: (index: TagIndex | null) => void (index && loaded.push(index)) };
  };
  const records = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: i + 1,
      title: i % 2 ? `Storing stout bottles ${i}` : `Hop aroma in an IPA ${i}`,
      body:
        i % 2 ? 'How long do bottles of stout keep in a cellar?' : 'Which hops give an IPA a citrus aroma?',
      tags: i % 2 ? ['stout', 'storage'] : ['hops', 'ipa'],
    }));

  it('stores the index under the queue prefix and a second worker loads each new version exactly once', async () => {
    const store = tagIndexStore(runtime.redis, runtime.config.queuePrefix);
    expect(store.key).toBe(`${runtime.config.queuePrefix}:ai:tag-index`);
    const a = engineRecorder();
    const b = engineRecorder();
    const workerA = trackTagIndex(a, store, log);
    const workerB = trackTagIndex(b, tagIndexStore(runtime.redis, runtime.config.queuePrefix), log);

    expect(await workerB.refresh()).toBe(false); // nothing published yet
    const first = await workerA.publish(await buildTagIndex(records(6)));
    expect(await runtime.redis.exists(store.key)).toBe(1);

    expect(await workerB.refresh()).toBe(true);
    expect(workerB.version).toBe(first.version);
    expect(b.loaded).toHaveLength(1);
    expect(b.loaded[0]!.size).toBe(6);
    await Promise.all([workerB.refresh(), workerB.refresh(), workerB.refresh()]);
    expect(b.loaded).toHaveLength(1); // unchanged version: no reload

    const second = await workerA.publish(await buildTagIndex(records(10)));
    expect(second.version).not.toBe(first.version);
    await Promise.all([workerB.refresh(), workerB.refresh()]);
    expect(b.loaded).toHaveLength(2); // concurrent refreshes share one load
    expect(b.loaded[1]!.size).toBe(10);
    expect(b.loaded[1]!.tags.map((t) => t.slug).sort()).toEqual(['hops', 'ipa', 'storage', 'stout']);
  });

  it('keeps the index in memory when the published one is unreadable', async () => {
    const store = tagIndexStore(runtime.redis, runtime.config.queuePrefix);
    const engine = engineRecorder();
    const worker = trackTagIndex(engine, store, log);
    expect(await worker.refresh()).toBe(true);
    const before = worker.version;
    await runtime.redis.hset(store.key, { version: 'corrupt', data: 'not gzip' });
    expect(await worker.refresh()).toBe(true);
    expect(worker.version).toBe(before);
    expect(engine.loaded).toHaveLength(1);
  });
});
