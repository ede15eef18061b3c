/**
 * Joins concurrent verifications of one domain within a process into shared probes. Bulk requests are split by
 * domain, so at any moment several jobs (of different requests) may want the same mail host; probed one by one,
 * each would open its own SMTP session and pay its greeting, EHLO, MAIL FROM and QUIT. Instead, at most
 * `maxRunning` probes per domain run at once, and whatever arrives meanwhile waits in batches of at most `maxBatch`
 * items that start, each as one probe, as soon as a running one ends. Nothing waits when the domain is idle: an
 * arrival with a free slot starts at once.
 */

interface Waiter<R> {
  offset: number;
  count: number;
  resolve: (results: R[]) => void;
  reject: (err: unknown) => void;
}

interface Batch<I, R> {
  items: I[];
  waiters: Waiter<R>[];
}

interface DomainState<I, R> {
  running: number;
  queued: Batch<I, R>[];
}

export interface DomainBatcherOptions<I, R> {
  /** Probes of one domain at once (the per-MX connection cap is the natural value). */
  maxRunning: number;
  /** Most items a waiting batch collects (one SMTP session's worth of RCPTs). */
  maxBatch: number;
  /** Verifies items of one domain; one result per item, in order. */
  run: (domain: string, items: I[]) => Promise<R[]>;
}

export function createDomainBatcher<I, R>(opts: DomainBatcherOptions<I, R>) {
  const domains = new Map<string, DomainState<I, R>>();

  function start(domain: string, state: DomainState<I, R>, batch: Batch<I, R>): void {
    state.running++;
    opts
      .run(domain, batch.items)
      .then(
        (results) => batch.waiters.forEach((w) => w.resolve(results.slice(w.offset, w.offset + w.count))),
        (err: unknown) => batch.waiters.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        state.running--;
        const next = state.queued.shift();
        if (next) start(domain, state, next);
        else if (state.running === 0) domains.delete(domain);
      });
  }

  /** Results for `items` (one domain's), in order, from a probe they may share with other callers' items. */
  function submit(domain: string, items: I[]): Promise<R[]> {
    const state = domains.get(domain) ?? { running: 0, queued: [] };
    domains.set(domain, state);
    return new Promise<R[]>((resolve, reject) => {
      const last = state.queued.at(-1);
      const batch =
        state.running < opts.maxRunning || !last || last.items.length + items.length > opts.maxBatch
          ? { items: [], waiters: [] }
          : last;
      batch.waiters.push({ offset: batch.items.length, count: items.length, resolve, reject });
      batch.items.push(...items);
      if (state.running < opts.maxRunning) start(domain, state, batch);
      else if (batch !== last) state.queued.push(batch);
    });
  }

  return { submit };
}

export type DomainBatcher<I, R> = ReturnType<typeof createDomainBatcher<I, R>>;
