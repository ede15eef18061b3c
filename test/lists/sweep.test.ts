import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { processChunk } from '../../shared/lists/chunk.js';
import { sweepLists } from '../../shared/lists/sweep.js';
import { listChunkJobId } from '../../shared/queues/verify-lists.js';
import { startWorkerPool, type WorkerPool } from '../../workers/pool.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys, worldEnv } from '../verify-service/helpers.js';
import { get, jsonList, startListWorld, waitForStatus, type VerifyApp } from './helpers.js';

// PostgreSQL holds the truth of a list: when its jobs are lost (Redis restarted, a chunk claimed by a job that
// vanished), the sweeper re-creates them from the tables and the list completes with every verdict right.

let world: Awaited<ReturnType<typeof startListWorld>>;
let runtime: TestRuntime;
let app: VerifyApp;
let key: string;
let pool: WorkerPool | undefined;

beforeAll(async () => {
  world = await startListWorld();
  runtime = await createTestRuntime(worldEnv(world.dns.endpoint, world.world.port));
  app = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await app?.close();
  await pool?.close(5000);
  await runtime?.close();
  await world?.close();
});

const sweep = () =>
  sweepLists({ database: runtime.database, queues: runtime.queues, logger: runtime.logger });
const jobIds = async () =>
  (await runtime.queues.queue('verify-lists').getJobs(['waiting', 'prioritized', 'delayed']))
    .map((j) => j.id)
    .sort();

describe('the list sweeper', () => {
  it('re-creates lost jobs, including a chunk claimed by a job that vanished, and the lists complete', async () => {
    const fresh = (await jsonList(app, key, { emails: ['alice@example.test', 'bob@example.test'] })).json()
      .data.id;
    const broken = (
      await jsonList(app, key, { emails: ['carol@example.test', 'x@catchall.test', 'carol@example.test'] })
    ).json().data.id;
    // Chunk 0 of `broken` claims its addresses, then its worker dies before storing a result.
    const dying = { verifyDomainGroup: () => Promise.reject(new Error('worker died')) };
    await expect(
      processChunk(
        {
          database: runtime.database,
          queues: runtime.queues,
          verifier: dying,
          retry: { delayMs: 1000, windowMs: 0 },
        },
        broken,
        0,
      ),
    ).rejects.toThrow('worker died');
    // Redis loses every job.
    await runtime.queues.queue('verify-lists').obliterate({ force: true });
    expect(await jobIds()).toEqual([]);

    expect(await sweep()).toEqual({ lists: 2, enqueued: 2, callbacks: 0 });
    // `fresh` gets its one lane back (two addresses are one chunk: none of the other LIST_LANES has anything to
    // claim); `broken` its claimed chunk 0 (chunk 0 claimed everything: no other lane has work).
    expect(await jobIds()).toEqual([listChunkJobId(fresh, 0), listChunkJobId(broken, 0)].sort());
    // Jobs already waiting are left alone: sweeping again adds nothing.
    expect(await sweep()).toEqual({ lists: 2, enqueued: 0, callbacks: 0 });

    pool = await startWorkerPool(runtime, ['verify-lists']);
    const a = await waitForStatus(app, key, fresh, ['completed', 'failed']);
    const b = await waitForStatus(app, key, broken, ['completed', 'failed']);
    expect(a).toMatchObject({
      status: 'completed',
      processed: 2,
      counts: { valid: 1, invalid: 1, risky: 0, unknown: 0 },
    });
    expect(b).toMatchObject({
      status: 'completed',
      processed: 3,
      counts: { valid: 2, invalid: 0, risky: 1, unknown: 0 },
    });
    const results = (await get(app, key, `/lists/${broken}/results`)).json().data.results;
    expect(results.map((r: { status: string }) => r.status)).toEqual(['valid', 'risky', 'valid']);
    // Ended lists are not swept.
    expect(await sweep()).toEqual({ lists: 0, enqueued: 0, callbacks: 0 });
  });
});
