import { describe, expect, it } from 'vitest';
// The driver's own file (its package exports do not name it), as patches/ leaves it.
const QUEUE_MODULE = '../../node_modules/postgres/src/queue.js';

interface DriverQueue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}

/**
 * postgres.js keeps its connections in queues (open, busy, full, …) and moves one between them on every query.
 * patches/ rewrites the queue so that it no longer grows by a hole per move under steady load; it must still behave
 * as a FIFO list from which any element can be removed, which a model of it checks over random operations.
 */
describe("the driver's connection queue", () => {
  it('behaves as a list with removal, over random pushes, shifts and removals', async () => {
    const { default: Queue } = (await import(QUEUE_MODULE)) as {
      default: (initial?: number[]) => DriverQueue<number>;
    };
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const queue = Queue([1, 2]);
    const model = [1, 2];
    let next = 3;
    for (let step = 0; step < 20_000; step++) {
      const op = random(10);
      if (op < 4) {
        expect(queue.push(next)).toBe(next);
        model.push(next++);
      } else if (op < 7) {
        if (model.length > 0) expect(queue.shift()).toBe(model.shift());
      } else {
        // Removing what is there, or what already left (a connection moved twice answers null the second time).
        const x = model.length > 0 && op < 9 ? model[random(model.length)]! : next + 1;
        const at = model.indexOf(x);
        expect(queue.remove(x)).toBe(at === -1 ? null : x);
        if (at !== -1) model.splice(at, 1);
      }
      expect(queue.length).toBe(model.length);
    }
    const rest: number[] = [];
    while (queue.length > 0) rest.push(queue.shift()!);
    expect(rest).toEqual(model);
  });
});
