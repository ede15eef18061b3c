import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FROZEN_EMAILS as emails, startFrozenWorld, type FrozenWorld } from './frozen-world.js';

// A worker killed in the middle of a bulk request loses nothing: its job's lock expires, another worker process
// takes the job over (BullMQ stalled-job recovery) and the waiting request still answers in full.

const SLOW = '127.0.5.20';

describe('a verify worker killed mid-probe', () => {
  let world: FrozenWorld;

  beforeAll(async () => {
    // The request waits 2 minutes. The job lock and the stalled check are the defaults (dispatch-timers.ts); later
    // sessions answer each command in 100 ms.
    world = await startFrozenWorld(SLOW, 100, { VERIFY_BULK_DEADLINE_MS: '120000' });
  });

  afterAll(async () => {
    await world?.close();
  });

  it('is replaced by another worker and the request answers with every result', async () => {
    const { app, key, smtp, rcptSeen } = world;
    const startWorker = () => world.startWorker('verify');
    const first = await startWorker();
    const answer = app.inject({
      method: 'POST',
      url: '/bulk-verify',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload: { emails },
    });

    await rcptSeen;
    // The second worker is up before the first dies; the job stays locked by the first (it renews its lock).
    await startWorker();
    const stats = smtp.stats.get(SLOW)!;
    // The first worker shares the waiting addresses over the host's two lanes: one or two sessions, all frozen.
    const beforeKill = stats.connections;
    expect(beforeKill).toBeGreaterThanOrEqual(1);
    expect(beforeKill).toBeLessThanOrEqual(2);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');

    const res = await answer;
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.count).toBe(emails.length);
    expect(body.data.map((r: { email: string }) => r.email)).toEqual(emails);
    expect(body.data.map((r: { status: string }) => r.status)).toEqual([
      'valid',
      'valid',
      'invalid',
      'valid',
      'valid',
    ]);
    expect(body.data[2]).toMatchObject({ reason: 'mailbox_not_found' });
    // The second worker probed the group again in sessions of its own.
    expect(stats.connections).toBeGreaterThan(beforeKill);
  }, 180_000);
});
