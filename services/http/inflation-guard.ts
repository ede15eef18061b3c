import { Duplex, Transform, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import { AppError } from '../../shared/errors.js';

/**
 * A request body sent with Content-Encoding (gzip, deflate, br; @fastify/compress decompresses it) may expand at
 * most this many times over what it was sent as, past its first MiB. Text and JSON compress a few times over and
 * gzip's own ceiling is about 1,000: without a bound, a few KB sent would cost the service the inflation (and the
 * parsing) of a whole body limit, and a body refused for its size went on being inflated to the end, only to be
 * thrown away.
 */
export const MAX_INFLATION = 100;
const INFLATION_FLOOR_BYTES = 2 ** 20;

export class InflationError extends AppError {
  constructor() {
    super(413, `A compressed request body may expand at most ${MAX_INFLATION} times over`);
  }
}

/** zlib counts what its engine consumed (`bytesWritten`); what arrived is, for a small body, all of it at once. */
const consumedBy = (stream: Readable): number | undefined => {
  const consumed = (stream as Readable & { bytesWritten?: unknown }).bytesWritten;
  return stream instanceof Duplex && typeof consumed === 'number' ? consumed : undefined;
};

/**
 * Placed after @fastify/compress's own preParsing step (which hands on its decompressor as the body): counts what
 * comes out, refuses past MAX_INFLATION with a 413, and once the body is refused or abandoned stops feeding the
 * decompressor, draining the request's bytes past it instead.
 */
const guardInflation: preParsingHookHandler = (request: FastifyRequest, _reply, payload, done) => {
  if (consumedBy(payload) === undefined) return done(null, payload);
  const raw = request.raw;
  let inflated = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      inflated += chunk.length;
      if (inflated > INFLATION_FLOOR_BYTES && inflated > MAX_INFLATION * consumedBy(payload)!)
        callback(new InflationError());
      else callback(null, chunk);
    },
  });
  // Fastify compares the bytes received with Content-Length through this property of the body it reads.
  Object.defineProperty(guard, 'receivedEncodedLength', {
    get: () => (payload as Readable & { receivedEncodedLength?: number }).receivedEncodedLength,
  });
  let stopped = false;
  const stopInflating = () => {
    if (stopped) return;
    stopped = true;
    payload.unpipe(guard);
    raw.unpipe(payload as Duplex);
    raw.resume();
  };
  guard.on('error', stopInflating);
  guard.on('close', () => {
    if (!guard.readableEnded) stopInflating();
  });
  payload.on('error', (err) => guard.destroy(err));
  payload.pipe(guard);
  done(null, guard);
};

/** Adds the guard to every route registered after it (call it after registering @fastify/compress). */
export function boundInflation(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const steps = route.preParsing;
    route.preParsing = [...(Array.isArray(steps) ? steps : steps ? [steps] : []), guardInflation];
  });
}
