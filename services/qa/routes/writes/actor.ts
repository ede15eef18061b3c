import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../../../shared/qa/writes.js';

export const WRITE_SECURITY = [{ bearer: [] }];

/** The key's owner acts; requireScope('qa:write') has already refused requests without a principal. */
export function actorOf(request: FastifyRequest): Actor {
  const principal = request.principal!;
  return { userId: principal.userId, scopes: principal.scopes };
}

/** A numeric post id from a path segment; anything else names no post (404, as an unknown id would). */
export function postId(raw: string): number | undefined {
  return /^[0-9]{1,10}$/.test(raw) ? Number(raw) : undefined;
}
