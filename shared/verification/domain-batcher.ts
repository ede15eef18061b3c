/**
 * Joins concurrent verifications of one domain within a process into shared probes. Bulk requests are split by
 * domain, so at any moment several jobs (of different requests) may want the same mail host; probed one by one,
 * each would open its own SMTP session and pay its greeting, EHLO, MAIL FROM and QUIT. Instead, at most
 * `maxRunning` probes per domain run at once, and whatever arrives meanwhile waits; each probe that starts takes a
 * share of what waits (at most `maxBatch` items). Nothing waits when the domain is idle: an arrival with a free
 * slot starts at once.
 *
 * A probe that ends while items wait takes what waits divided by the probes that can run at once, so that the last
 * items of a busy domain are spread over its connections rather than carried by one while the other idles (11
 * left: 6 now and 5 for the other probe when it ends, not 11 in a row). Taking too little costs only another
 * round on the connection just used; taking too much leaves a connection idle. An idle domain's arrivals are
 * spread over the free probes. A share is never smaller than `minBatch` unless that is all there is: a few
 * addresses are not worth another connection.
 */

/** An item waiting for a probe, with everyone who asked for it (equal items are probed once). */
interface Waiting<I, R> {
  item: I;
  key: string;
  callers: { resolve: (result: R) => void; reject: (err: unknown) => void }[];
}

interface DomainState<I, R> {
  running: number;
  queue: Waiting<I, R>[];
  /** The waiting items by key. */
  byKey: Map<string, Waiting<I, R>>;
}

export interface DomainBatcherOptions<I, R> {
  /** Probes of one domain at once (the per-MX connection cap is the natural value). */
  maxRunning: number;
  /** Most items one probe takes (one SMTP session's worth of RCPTs). */
  maxBatch: number;
  /**
   * Fewest items worth a probe of their own while more wait: splitting fewer off would save less time than a new
   * connection costs the server.
   */
  minBatch: number;
  /** Verifies items of one domain; one result per item, in order. */
  run: (domain: string, items: I[]) => Promise<R[]>;
  /** Items with the same key are the same work: while one waits, others join it. */
  key: (item: I) => string;
}

export function createDomainBatcher<I, R>(opts: DomainBatcherOptions<I, R>) {
  const domains = new Map<string, DomainState<I, R>>();

  /** Starts a probe with its share of the domain's waiting items, which `ways` probes share. */
  function start(domain: string, state: DomainState<I, R>, ways: number): void {
    const share = Math.ceil(state.queue.length / ways);
    const batch = state.queue.splice(0, Math.min(opts.maxBatch, Math.max(opts.minBatch, share, 1)));
    for (const w of batch) state.byKey.delete(w.key);
    state.running++;
    opts
      .run(
        domain,
        batch.map((w) => w.item),
      )
      .then(
        (results) => batch.forEach((w, k) => w.callers.forEach((c) => c.resolve(results[k]!))),
        (err: unknown) => batch.forEach((w) => w.callers.forEach((c) => c.reject(err))),
      )
      .finally(() => {
        state.running--;
        if (state.queue.length > 0) start(domain, state, opts.maxRunning);
        else if (state.running === 0) domains.delete(domain);
      });
  }

  /** Results for `items` (one domain's), in order, from probes they may share with other callers' items. */
  function submit(domain: string, items: I[]): Promise<R[]> {
    const state: DomainState<I, R> = domains.get(domain) ?? { running: 0, queue: [], byKey: new Map() };
    domains.set(domain, state);
    const results = Promise.all(
      items.map(
        (item) =>
          new Promise<R>((resolve, reject) => {
            const key = opts.key(item);
            const waiting = state.byKey.get(key);
            if (waiting) return void waiting.callers.push({ resolve, reject });
            const fresh: Waiting<I, R> = { item, key, callers: [{ resolve, reject }] };
            state.queue.push(fresh);
            state.byKey.set(key, fresh);
          }),
      ),
    );
    while (state.running < opts.maxRunning && state.queue.length > 0)
      start(domain, state, opts.maxRunning - state.running);
    if (state.running === 0) domains.delete(domain);
    return results;
  }

  return { submit };
}

export type DomainBatcher<I, R> = ReturnType<typeof createDomainBatcher<I, R>>;
