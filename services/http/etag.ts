import { hash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Weak ETags on successful reads, and 304 Not Modified when If-None-Match names the current one. Only GET and HEAD
 * answers with status 200 get one: a write or an error is never "not modified". The tag hashes the serialised body,
 * so it changes whenever anything a client sees changes (views included, once flushed).
 */
// One-shot hashing: no Hash object per answer.
const etagFor = (payload: string | Buffer): string => `W/"${hash('sha1', payload, 'base64url')}"`;

// If-None-Match is a list of tags (or *); weak comparison ignores the W/ prefix (RFC 9110 §13.1.2).
function matches(header: string, etag: string): boolean {
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === opaque;
  });
}

export const etagPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', async (request, reply, payload) => {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload;
      if (!(typeof payload === 'string' || Buffer.isBuffer(payload))) return payload;
      const etag = etagFor(payload);
      reply.header('etag', etag);
      const header = request.headers['if-none-match'];
      if (typeof header === 'string' && matches(header, etag)) {
        reply.code(304);
        return '';
      }
      return payload;
    });
  },
  { name: 'agora-etag' },
);
