import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribers } from '../../shared/db/schema/index.js';
import { startProcess, type RunningProcess } from '../support/processes.js';
import {
  addConfirmed,
  addQuestions,
  sendsOf,
  startNewsletterWorld,
  until,
  type NewsletterWorld,
} from './helpers.js';

/**
 * A worker process is SIGKILLed while the digest fan-out is being sent: some messages delivered, some handed to
 * the SMTP server with no reply yet (the "sent but not recorded" window), the rest still queued. A fresh worker
 * finishes the period. Nobody may receive the digest twice.
 */
describe('a worker killed mid-fan-out', () => {
  const SUBSCRIBERS = 40;
  const DELIVERED_BEFORE_HANG = 10;
  const period = 'daily-2024-04-02';
  let world: NewsletterWorld;
  let worker: RunningProcess | undefined;

  beforeAll(async () => {
    world = await startNewsletterWorld();
  });
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await world.close();
  });

  it('never mails a subscriber twice for the period', { timeout: 90_000 }, async () => {
    await addQuestions(world.runtime, [
      { title: 'Kegging versus bottling', votes: 4, createdAt: new Date('2024-04-02T09:00:00Z') },
    ]);
    const emails = Array.from({ length: SUBSCRIBERS }, (_, i) => `reader${i}@example.test`);
    const subs = await addConfirmed(world.runtime, emails, 'daily');

    world.catcher.holdAfter(DELIVERED_BEFORE_HANG);
    worker = startProcess('workers/main.ts', ['--queues', 'newsletter'], {
      ...world.runtime.env,
      LOG_LEVEL: 'info',
      WORKER_METRICS_PORT: '0',
    });
    await worker.waitFor(/workers started/);
    await world.runtime.queues.enqueue('newsletter', 'build-digest', { frequency: 'daily', period });

    // Messages are in the server's hands without a reply: kill the worker now.
    await world.catcher.waitFor(1, { held: true, timeoutMs: 30_000 });
    await worker.stop('SIGKILL');
    const heldRecipients = world.catcher.held.flatMap((m) => m.to);
    expect(world.catcher.messages).toHaveLength(DELIVERED_BEFORE_HANG);

    // A fresh worker takes the queued jobs at once and the killed one's jobs once their locks expire.
    world.catcher.holdAfter(null);
    await world.startWorkers();
    const queue = world.runtime.queues.queue('newsletter');
    const rows = await until(
      async () => {
        // (delayed jobs are the schedulers' next builds, not ours)
        const counts = await queue.getJobCounts('wait', 'active', 'prioritized');
        const sends = await sendsOf(world.runtime, period);
        return Object.values(counts).every((n) => n === 0) && sends.length === SUBSCRIBERS && sends;
      },
      'every send job settled',
      60_000,
    );

    const delivered = world.catcher.messages.flatMap((m) => m.to);
    // Nobody twice, whether delivered before the kill, held during it, or sent after it.
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(delivered.filter((to) => heldRecipients.includes(to))).toEqual([]);
    // Every subscriber is accounted for: 'sent' and delivered once, or 'sending' (outcome unknown) and not resent.
    const emailOf = new Map(subs.map((s) => [s.id, s.email]));
    const sent = rows.filter((r) => r.status === 'sent').map((r) => emailOf.get(r.subscriberId)!);
    const unknown = rows.filter((r) => r.status === 'sending').map((r) => emailOf.get(r.subscriberId)!);
    expect(sent.every((to) => delivered.includes(to))).toBe(true);
    // Delivered but unrecorded (killed between the 250 and the update) or held: 'sending', and not resent.
    expect(delivered.filter((to) => !sent.includes(to)).every((to) => unknown.includes(to))).toBe(true);
    expect(heldRecipients.every((to) => unknown.includes(to))).toBe(true);
    expect(sent.length + unknown.length).toBe(SUBSCRIBERS);
    expect(unknown.length).toBeGreaterThan(0);
    // Every subscriber stays confirmed: an unknown outcome is not a bounce.
    const states = await world.runtime.database.db
      .select({ status: subscribers.status })
      .from(subscribers)
      .where(eq(subscribers.frequency, 'daily'));
    expect(states.every((s) => s.status === 'confirmed')).toBe(true);
  });
});
