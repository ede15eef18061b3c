import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminDeps } from './deps.js';
import { page, type Html, type PageOptions } from './html.js';
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

export interface Flash {
  kind: 'ok' | 'error';
  text: string | Html;
}

/**
 * A page with forms that posts back to itself: `render(request, reply, status, flash)` draws it for a GET and again
 * after each POST (with the outcome as a flash). `body` builds the page's content; its forms carry `csrf`.
 */
export function formPage(
  sessions: AdminSessions,
  options: Pick<PageOptions, 'title' | 'active'>,
  body: (csrf: string, request: FastifyRequest) => Promise<Html>,
) {
  return async (request: FastifyRequest, reply: FastifyReply, status: number, flash?: Flash) => {
    const csrf = sessions.csrfToken(request.adminSession!);
    return sendPage(reply, status, page({ ...options, csrf, flash }, await body(csrf, request)));
  };
}
