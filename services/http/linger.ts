import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * An answer sent before the request body was read (413 for a body over the limit, 401/403 before the body)
 * must reach a client that only reads once it has sent everything. Closing the socket while such a client is
 * still uploading makes the kernel reset the connection, and the answer is lost with it ("connection reset"
 * instead of a 413). So the rest of the body is read and dropped, up to LINGER_MAX_BYTES, and the connection
 * stays usable; a client that keeps sending past that is cut off (requestTimeout bounds the time as well).
 */
export const LINGER_MAX_BYTES = 64 * 2 ** 20;

/**
 * Sockets whose request was answered before its body came whole, while the rest is read: if the request timeout
 * ends that read, the socket closes without a 408 (clientErrorHandler), as that would be a second answer.
 */
export const answeredBeforeBody = new WeakSet<object>();

export function lingerOnUnreadBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  if (raw.complete || raw.destroyed) return;
  // Fastify asks for `Connection: close` here; Node would then close right after the answer, mid-upload.
  reply.removeHeader('connection');
  const socket = raw.socket;
  answeredBeforeBody.add(socket);
  raw.once('end', () => answeredBeforeBody.delete(socket));
  let dropped = 0;
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_MAX_BYTES) raw.socket.destroy();
  });
  raw.resume();
}
