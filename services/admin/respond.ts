import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminDeps } from './deps.js';
import type { AdminSessions } from './session.js';

/** What every admin page module gets. */
export interface AdminContext {
  deps: AdminDeps;
  sessions: AdminSessions;
}

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Admin pages are never cached, never framed, and load nothing from elsewhere (they have no script at all). */
export const sendPage = (reply: FastifyReply, status: number, body: string) =>
  reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', CSP)
    .status(status)
    .send(body);

/** The body of a form POST, whatever the parser produced. */
export const formBody = (request: FastifyRequest): Record<string, unknown> =>
  request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
