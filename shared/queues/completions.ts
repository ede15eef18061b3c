import type { Queue, QueueEvents } from 'bullmq';

/** How a waited-for job ended, as far as the waiter knows. */
export type JobOutcome<T = unknown> =
  { state: 'completed'; value: T } | { state: 'failed'; reason: string } | { state: 'timeout' };

export class QueueClosedError extends Error {}

type Settle = (outcome: JobOutcome) => void;

/** One job to add: its place in the waited batch and the id to add it under. */
export interface JobToAdd {
  index: number;
  jobId: string;
}

/**
 * How often a waiter checks that the jobs it waits for still exist in Redis. A Redis that lost its data (restarted
 * without persistence, a failover to a replica that had not caught up) has lost the jobs with it: the worker that
 * ran one cannot complete it ("Missing key for job … moveToFinished"), no completion is ever announced, and the
 * waiter would wait for its whole deadline (a /verify answered unknown/timeout after 60 s). A job found missing at
 * two checks in a row is added again, under a new id: a job that completed and was removed just before its
 * completion event was read is not run twice for one missed check, and the new id keeps the worker still running
 * the lost attempt (it tracks its locks by job id) apart from the new one.
 */
export const LOST_JOB_CHECK_MS = 2000;

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
   * Registers waiters for `jobIds`, then runs `add` (which adds those jobs, each under the id given); resolves with
   * one outcome per id, in order, `timeout` for those not ended within `deadlineMs`. Rejects if the first `add`
   * does, or if `close` comes first. A job lost by Redis is added again by `add`, under another id (above).
   */
  async function waitFor(
    jobIds: readonly string[],
    deadlineMs: number,
    add: (jobs: readonly JobToAdd[]) => Promise<unknown>,
  ): Promise<JobOutcome[]> {
    const all = jobIds.map((jobId, index) => ({ index, jobId }));
    if (jobIds.length === 0) return add(all).then(() => []);
    const outcomes: (JobOutcome | undefined)[] = jobIds.map(() => undefined);
    // The id each job is waited for under now (a lost job's is replaced when it is added again).
    const current = [...jobIds];
    let lostCheck: NodeJS.Timeout | undefined;
    let left = jobIds.length;
    let finished = false;
    let done: (err?: Error) => void = () => {};
    const settled = new Promise<JobOutcome[]>((resolve, reject) => {
      done = (err) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        clearInterval(lostCheck);
        batches.delete(done);
        current.forEach((id, k) => unregister(id, settles[k]!));
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
      await add(all);
    } catch (err) {
      done(err as Error);
      return settled;
    }
    if (!finished)
      lostCheck = watchForLostJobs(jobIds, current, outcomes, settles, add, () => finished).unref();
    return settled;
  }

  /** Every LOST_JOB_CHECK_MS: the unsettled jobs whose key was missing twice in a row are added again. */
  function watchForLostJobs(
    jobIds: readonly string[],
    current: string[],
    outcomes: readonly (JobOutcome | undefined)[],
    settles: readonly Settle[],
    add: (jobs: readonly JobToAdd[]) => Promise<unknown>,
    ended: () => boolean,
  ): NodeJS.Timeout {
    let missingBefore = new Set<number>();
    let checking = false;
    let attempt = 0;
    return setInterval(() => {
      if (checking) return;
      checking = true;
      void (async () => {
        const open = current.map((_, k) => k).filter((k) => !outcomes[k]);
        // A failed read (Redis still away) rejects: nothing is taken for missing.
        const found = await Promise.all(open.map((k) => queue.getJob(current[k]!)));
        if (ended()) return;
        const missing = new Set(open.filter((_, i) => found[i] === undefined && !outcomes[open[i]!]));
        const lost = [...missing].filter((k) => missingBefore.has(k));
        missingBefore = new Set([...missing].filter((k) => !lost.includes(k)));
        if (lost.length === 0) return;
        attempt++;
        const again = lost.map((k) => ({
          index: k,
          jobId: `${jobIds[k]!}-r${attempt}`,
        }));
        for (const { index, jobId } of again) {
          unregister(current[index]!, settles[index]!);
          current[index] = jobId;
          waiting.set(jobId, [...(waiting.get(jobId) ?? []), settles[index]!]);
        }
        await add(again);
      })()
        // Redis still away, or the add failed: the next check tries again.
        .catch(() => {})
        .finally(() => (checking = false));
    }, LOST_JOB_CHECK_MS);
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
