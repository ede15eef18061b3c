import { parentPort, workerData } from 'node:worker_threads';
import { SearchVectors } from '../db/bulk/search-vectors.js';
import { generateBlock, newTally, TextSink, type BlockStart, type DemoContext } from './block.js';
import type { FromWorker, ToWorker } from './workers.js';

/**
 * A generator thread (workers.ts): generates the blocks it is sent, one at a time, as COPY text. The chunks its
 * search vectors need are asked of the loading thread, which owns the database connection.
 */
const port = parentPort!;
const ctx = (workerData as { ctx: DemoContext }).ctx;
const tally = newTally(ctx.users);
const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

let queries = 0;
const answers = new Map<number, { resolve: (rows: unknown[]) => void; reject: (err: Error) => void }>();
const vectors = new SearchVectors({
  query: <T>(text: string, params?: string[]) =>
    new Promise<T[]>((resolve, reject) => {
      const id = ++queries;
      answers.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
      post({ type: 'query', id, text, params });
    }),
});

let queue = Promise.resolve();
const run = (block: number, start: BlockStart) => async () => {
  const sink = new TextSink();
  await generateBlock(ctx, block, start, vectors, sink, tally);
  post({ type: 'block', block, out: sink.out });
};

port.on('message', (message: ToWorker) => {
  if (message.type === 'answer') {
    const waiting = answers.get(message.id)!;
    answers.delete(message.id);
    if (message.error !== undefined) waiting.reject(new Error(message.error));
    else waiting.resolve(message.rows ?? []);
    return;
  }
  const step =
    message.type === 'block'
      ? run(message.block, message.start)
      : async () =>
          post({ type: 'tally', tally }, [
            tally.questionsBy.buffer as ArrayBuffer,
            tally.answersBy.buffer as ArrayBuffer,
          ]);
  queue = queue.then(step).catch((err: unknown) => {
    post({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  });
});
