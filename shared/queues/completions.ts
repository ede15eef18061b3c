import type { Queue, QueueEvents } from 'bullmq';

/** How a waited-for job ended, as far as the waiter knows. */
export type JobOutcome<T = unknown> =
  { state: 'completed'; value: T } | { state: 'failed'; reason: string } | { state: 'timeout' };

export class QueueClosedError extends Error {}

type Settle = (outcome: JobOutcome) => void;

/**
 * Waits for jobs' ends on one queue through its QueueEvents, with one listener per event kind and a map of the
 * waiting job ids, rather than BullMQ's `waitUntilFinished`, which adds listeners and runs a Redis script per job.
 * A waiter is registered before its job is added (and QueueEvents is already reading the stream then), so no end
 * can be missed; a job id that already existed is announced as `duplicated`, and that job's state is read once.
 */
export function createCompletions(events: QueueEvents, queue: Queue) {
  const waiting = new Map<string, Settle[]>();
  // The `done` of every batch being waited for, to end them when the producer closes.
  const batches = new Set<(err?: Error) => void>();

  const settle = (jobId: string, outcome: JobOutcome): void => {
    const settles = waiting.get(jobId);
    if (!settles) return;
    waiting.delete(jobId);
    for (const s of settles) s(outcome);
  };

  events.on('completed', ({ jobId, returnvalue }) =>
    settle(jobId, { state: 'completed', value: returnvalue }),
  );
  events.on('failed', ({ jobId, failedReason }) => settle(jobId, { state: 'failed', reason: failedReason }));
  events.on('duplicated', ({ jobId }) => {
    if (waiting.has(jobId)) void settleIfFinished(jobId);
  });

  /** A job that was already there when we added it may have ended before we listened. */
  async function settleIfFinished(jobId: string): Promise<void> {
    const job = await queue.getJob(jobId).catch(() => undefined);
    const state = await job?.getState().catch(() => undefined);
    if (state === 'completed') settle(jobId, { state: 'completed', value: job!.returnvalue });
    else if (state === 'failed') settle(jobId, { state: 'failed', reason: job!.failedReason });
  }

  /**
   * Registers waiters for `jobIds`, then runs `add` (which adds those jobs); resolves with one outcome per id, in
   * order, `timeout` for those not ended within `deadlineMs`. Rejects if `add` does, or if `close` comes first.
   */
  async function waitFor(
    jobIds: readonly string[],
    deadlineMs: number,
    add: () => Promise<unknown>,
  ): Promise<JobOutcome[]> {
    if (jobIds.length === 0) return add().then(() => []);
    const outcomes: (JobOutcome | undefined)[] = jobIds.map(() => undefined);
    let left = jobIds.length;
    let finished = false;
    let done: (err?: Error) => void = () => {};
    const all = new Promise<JobOutcome[]>((resolve, reject) => {
      done = (err) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        batches.delete(done);
        jobIds.forEach((id, k) => unregister(id, settles[k]!));
        if (err) reject(err);
        else resolve(outcomes.map((o) => o ?? { state: 'timeout' }));
      };
    });
    const settles = jobIds.map((id, k) => {
      const s: Settle = (outcome) => {
        if (outcomes[k]) return;
        outcomes[k] = outcome;
        if (--left === 0) done();
      };
      waiting.set(id, [...(waiting.get(id) ?? []), s]);
      return s;
    });
    const timer = setTimeout(() => done(), deadlineMs);
    batches.add(done);
    try {
      await add();
    } catch (err) {
      done(err as Error);
    }
    return all;
  }

  function unregister(jobId: string, s: Settle): void {
    const rest = (waiting.get(jobId) ?? []).filter((other) => other !== s);
    if (rest.length > 0) waiting.set(jobId, rest);
    else waiting.delete(jobId);
  }

  /** Ends every wait with a QueueClosedError (the producer is shutting down). */
  function close(): void {
    for (const done of [...batches])
      done(new QueueClosedError(`the ${queue.name} queue closed while its jobs were awaited`));
  }

  return { waitFor, close };
}

export type Completions = ReturnType<typeof createCompletions>;
