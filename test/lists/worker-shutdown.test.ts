import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FROZEN_EMAILS as emails,
  startFrozenWorld,
  type FrozenWorld,
} from '../verify-service/frozen-world.js';
import { get, jsonList, waitForStatus } from './helpers.js';

// A list worker stopped with SIGTERM while its chunk waits on a mail server that does not answer: past the shutdown
// deadline the process exits at once (code 0) with the chunk unfinished, and another worker verifies it. Before,
// the pool closed its processors under the running chunk: here that close waited for the frozen probe until the
// grace timer killed the process (exit 1); with the host job in another process it answered the chunk's waits as
// timed out, and rows nobody had probed were stored `unknown`.

const SLOW = '127.0.6.21';

describe('a list worker stopped past its shutdown deadline', () => {
  let world: FrozenWorld;

  beforeAll(async () => {
    world = await startFrozenWorld(SLOW, 50, { WORKER_LOCK_MS: '2000', SHUTDOWN_TIMEOUT_MS: '500' });
  });

  afterAll(async () => {
    await world?.close();
  });

  it('leaves its chunk to another worker, and the list completes with every verdict right', async () => {
    const { app, key, rcptSeen } = world;
    const first = await world.startWorker('verify-lists');
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;

    await rcptSeen;
    await world.startWorker('verify-lists');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('left to other workers');

    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(list).toMatchObject({
      status: 'completed',
      processed: 5,
      counts: { valid: 4, invalid: 1, risky: 0, unknown: 0 },
    });
    const results = (await get(app, key, `/lists/${id}/results`)).json().data.results;
    expect(results.map((r: { status: string }) => r.status)).toEqual([
      'valid',
      'valid',
      'invalid',
      'valid',
      'valid',
    ]);
  }, 240_000);
});
