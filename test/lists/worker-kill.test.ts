import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FROZEN_EMAILS as emails,
  startFrozenWorld,
  type FrozenWorld,
} from '../verify-service/frozen-world.js';
import { get, jsonList, waitForStatus } from './helpers.js';

// A verify-lists worker process SIGKILLed in the middle of a list loses nothing: its chunk's lock expires, another
// worker process takes the chunk over (BullMQ stalled-job recovery), probes only what has no result yet, and the
// list completes with every verdict right and every row written once.

const SLOW = '127.0.6.20';
/** The verdicts of FROZEN_EMAILS, in their order (the third has no mailbox). */
const STATUSES = ['valid', 'valid', 'invalid', 'valid', 'valid'];

describe('a list worker killed mid-probe', () => {
  let world: FrozenWorld;

  beforeAll(async () => {
    // Later sessions answer each command in 50 ms.
    world = await startFrozenWorld(SLOW, 50, { WORKER_LOCK_MS: '2000' });
  });

  afterAll(async () => {
    await world?.close();
  });

  it('is replaced by another worker and the list completes with every row verified once', async () => {
    const { app, key, smtp, runtime, rcptSeen } = world;
    const startWorker = () => world.startWorker('verify-lists');
    const first = await startWorker();
    const created = await jsonList(app, key, { emails });
    expect(created.statusCode).toBe(202);
    const { id } = created.json().data;

    await rcptSeen;
    await startWorker();
    expect(smtp.stats.get(SLOW)!.connections).toBe(1);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');

    const list = await waitForStatus(app, key, id, ['completed', 'failed', 'cancelled']);
    expect(list).toMatchObject({
      status: 'completed',
      total: 5,
      unique: 4,
      processed: 5,
      progress: 100,
      counts: { valid: 4, invalid: 1, risky: 0, unknown: 0 },
    });
    const results = (await get(app, key, `/lists/${id}/results`)).json().data.results;
    expect(results.map((r: { email: string }) => r.email)).toEqual(emails);
    expect(results.map((r: { status: string }) => r.status)).toEqual(STATUSES);
    expect(results[2]).toMatchObject({ reason: 'mailbox_not_found' });
    // Every row has one result and every address was verified once: the counters (moved with each write) agree.
    const [state] = await runtime.database.query<{ probed: number; rows: number; verified: number }>(
      sql`SELECT l.probed,
            (SELECT count(*)::int FROM verification_list_rows r WHERE r.list_id = l.id AND r.result IS NOT NULL) AS rows,
            (SELECT count(*)::int FROM verification_list_addresses a WHERE a.list_id = l.id AND a.verified) AS verified
          FROM verification_lists l WHERE l.id = ${id}`,
    );
    expect(state).toEqual({ probed: 4, rows: 5, verified: 4 });
    // The second worker probed the chunk again in sessions of its own (the dead worker's in-flight items and the
    // re-run chunk's may go out on separate sessions of the host job), never more than the per-MX cap at once.
    const replacementSessions = smtp.stats.get(SLOW)!.connections - 1;
    expect(replacementSessions).toBeGreaterThanOrEqual(1);
    expect(replacementSessions).toBeLessThanOrEqual(runtime.config.verify.mxConcurrency);
  }, 240_000);
});

// A list worker stopped with SIGTERM while its chunk waits on a mail server that does not answer: past the shutdown
// deadline the process exits at once (code 0) with the chunk unfinished, and another worker verifies it. Before,
// the pool closed its processors under the running chunk: here that close waited for the frozen probe until the
// grace timer killed the process (exit 1); with the host job in another process it answered the chunk's waits as
// timed out, and rows nobody had probed were stored `unknown`.

const SLOW_AT_SHUTDOWN = '127.0.6.21';

describe('a list worker stopped past its shutdown deadline', () => {
  let world: FrozenWorld;

  beforeAll(async () => {
    world = await startFrozenWorld(SLOW_AT_SHUTDOWN, 50, {
      WORKER_LOCK_MS: '2000',
      SHUTDOWN_TIMEOUT_MS: '500',
    });
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
    expect(results.map((r: { status: string }) => r.status)).toEqual(STATUSES);
  }, 240_000);
});
