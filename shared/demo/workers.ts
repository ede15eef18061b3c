import { Worker } from 'node:worker_threads';
import type { BulkSession } from '../db/bulk/session.js';
import type { BlockStart, BlockText, DemoContext, Tally } from './block.js';

/**
 * Generator threads for the COPY path (generate-worker.ts): each generates whole blocks as COPY text while the
 * loading thread writes earlier ones on the transaction's one connection, so both cores and PostgreSQL stay busy.
 */
export type ToWorker =
  | { type: 'block'; block: number; start: BlockStart }
  | { type: 'tally' }
  | { type: 'answer'; id: number; rows?: unknown[]; error?: string };
export type FromWorker =
  | { type: 'block'; block: number; out: BlockText }
  | { type: 'tally'; tally: Tally }
  | { type: 'query'; id: number; text: string; params?: string[] }
  | { type: 'error'; message: string };

/**
 * The worker runs this module's sibling generate-worker.ts (or .js once built). Under tsx (npm run seed) or vitest,
 * TypeScript is compiled by hooks of the main thread that a worker does not inherit: the entry is loaded through
 * tsx's API then.
 */
const BOOT = `import { workerData } from 'node:worker_threads';
const { entry, tsx } = workerData.boot;
if (tsx) await (await import(tsx)).tsImport(entry, entry);
else await import(entry);`;

export class GeneratorWorker {
  private readonly worker: Worker;
  private readonly blocks = new Map<
    number,
    { resolve: (out: BlockText) => void; reject: (err: Error) => void }
  >();
  private tallied?: { resolve: (tally: Tally) => void; reject: (err: Error) => void };
  private failure?: Error;

  constructor(session: BulkSession, ctx: DemoContext) {
    const self = new URL(import.meta.url);
    const entry = new URL(
      self.pathname.endsWith('.ts') ? './generate-worker.ts' : './generate-worker.js',
      self,
    ).href;
    const tsx = entry.endsWith('.ts') ? import.meta.resolve('tsx/esm/api') : undefined;
    this.worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(BOOT)}`), {
      workerData: { boot: { entry, tsx }, ctx },
    });
    this.worker.on('message', (message: FromWorker) => {
      if (message.type === 'block') {
        this.blocks.get(message.block)?.resolve(message.out);
        this.blocks.delete(message.block);
      } else if (message.type === 'tally') this.tallied?.resolve(message.tally);
      else if (message.type === 'query') {
        session.query(message.text, message.params).then(
          (rows) => this.send({ type: 'answer', id: message.id, rows }),
          (err: unknown) => this.send({ type: 'answer', id: message.id, error: String(err) }),
        );
      } else this.fail(new Error(`generator thread failed: ${message.message}`));
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`generator thread exited (code ${code})`)));
  }

  /** Generates a block; the worker takes blocks in the order they are asked. */
  block(block: number, start: BlockStart): Promise<BlockText> {
    return this.ask((resolve, reject) => this.blocks.set(block, { resolve, reject }), {
      type: 'block',
      block,
      start,
    });
  }

  /** The posts per author of every block this worker generated (after them). */
  tally(): Promise<Tally> {
    return this.ask((resolve, reject) => (this.tallied = { resolve, reject }), { type: 'tally' });
  }

  async close(): Promise<void> {
    this.failure ??= new Error('generator thread closed');
    await this.worker.terminate();
  }

  private ask<T>(
    register: (resolve: (value: T) => void, reject: (err: Error) => void) => void,
    message: ToWorker,
  ): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const answer = new Promise<T>(register);
    this.send(message);
    return answer;
  }

  private send(message: ToWorker): void {
    if (!this.failure) this.worker.postMessage(message);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const waiting of this.blocks.values()) waiting.reject(err);
    this.blocks.clear();
    this.tallied?.reject(err);
  }
}
