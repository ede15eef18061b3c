/**
 * The schedule bound of bench/verify.ts: how long a prober with no cost of its own (no CPU, no queue, no round trip)
 * would take for the same requests sent the same way, `inflight` at a time, each answered when its last address is.
 * Each host has `cap` lanes; a free lane takes the host's oldest waiting address (first come, first served); a
 * lane's session costs `overhead − 1` replies to open (greeting, EHLO, MAIL FROM) and one to close (QUIT) once it
 * has sent `maxRcpt` RCPTs; a domain's first RCPT is preceded by its catch-all probe. Every reply costs `delayMs`.
 * With every request in flight at once it approaches the ideal bound; with few in flight a request waits for its
 * slowest host, and the bound says what that costs by itself.
 */
export interface ScheduleModel {
  delayMs: number;
  cap: number;
  maxRcpt: number;
  /** Replies a session costs besides its RCPTs (greeting, EHLO, MAIL FROM, QUIT). */
  overhead: number;
  inflight: number;
}

interface Lane {
  freeAt: number;
  /** RCPTs sent in the open session; -1 without one. */
  rcpts: number;
}

/** Seconds for `requests` (each a list of host names, one per address) under the model. */
export function scheduleBound(requests: readonly (readonly string[])[], model: ScheduleModel): number {
  const waiting = new Map<string, number[]>(); // host → request indexes of its waiting addresses, oldest first
  const lanes = new Map<string, Lane[]>();
  const probedCatchAll = new Set<string>();
  const left = requests.map((r) => r.length);
  const events = new MinHeap<{ at: number; host?: string; request: number }>();
  let nextRequest = 0;
  let end = 0;

  const start = (request: number, at: number) => {
    for (const host of requests[request]!) {
      if (!waiting.has(host)) {
        waiting.set(host, []);
        lanes.set(
          host,
          Array.from({ length: model.cap }, () => ({ freeAt: 0, rcpts: -1 })),
        );
      }
      waiting.get(host)!.push(request);
    }
    for (const host of new Set(requests[request])) dispatch(host, at);
  };
  const dispatch = (host: string, now: number) => {
    const queue = waiting.get(host)!;
    for (const lane of lanes.get(host)!) {
      if (queue.length === 0) return;
      if (lane.freeAt > now) continue;
      const request = queue.shift()!;
      let replies = 1;
      if (lane.rcpts < 0 || lane.rcpts >= model.maxRcpt) {
        replies += model.overhead - (lane.rcpts < 0 ? 1 : 0);
        lane.rcpts = 0;
      }
      if (!probedCatchAll.has(host)) {
        probedCatchAll.add(host);
        replies++;
        lane.rcpts++;
      }
      lane.rcpts++;
      lane.freeAt = now + replies * model.delayMs;
      events.push(lane.freeAt, { at: lane.freeAt, host, request });
    }
  };

  for (; nextRequest < Math.min(model.inflight, requests.length); nextRequest++) start(nextRequest, 0);
  for (let event = events.pop(); event; event = events.pop()) {
    const { at, host, request } = event;
    if (--left[request]! === 0) {
      end = Math.max(end, at);
      if (nextRequest < requests.length) start(nextRequest++, at);
    }
    dispatch(host!, at);
  }
  return end / 1000;
}

/** A binary heap ordered by a number: the simulator's event queue. */
class MinHeap<T> {
  private readonly keys: number[] = [];
  private readonly values: T[] = [];

  push(key: number, value: T): void {
    let i = this.keys.length;
    this.keys.push(key);
    this.values.push(value);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keys[parent]! <= key) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    if (this.keys.length === 0) return undefined;
    const top = this.values[0];
    const lastKey = this.keys.pop()!;
    const lastValue = this.values.pop()!;
    if (this.keys.length > 0) {
      this.keys[0] = lastKey;
      this.values[0] = lastValue;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let least = i;
        if (l < this.keys.length && this.keys[l]! < this.keys[least]!) least = l;
        if (r < this.keys.length && this.keys[r]! < this.keys[least]!) least = r;
        if (least === i) break;
        this.swap(i, least);
        i = least;
      }
    }
    return top;
  }

  private swap(a: number, b: number): void {
    [this.keys[a], this.keys[b]] = [this.keys[b]!, this.keys[a]!];
    [this.values[a], this.values[b]] = [this.values[b]!, this.values[a]!];
  }
}
