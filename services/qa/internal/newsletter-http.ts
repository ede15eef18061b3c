import { Type } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../../../shared/html-escape.js';
import { AppError } from '../../../shared/errors.js';
import { lingerOnUnreadBody } from '../../http/linger.js';

/**
 * Schemas, body validation and the error/HTML rendering of the newsletter routes. Their error body carries
 * both shapes: the internal endpoint's `{success: false, message}` (DESIGN.md: "an invalid address → 400 with
 * success: false") and the API's `{error: true, message, code}`, so either kind of client reads it.
 */

export const NewsletterResult = Type.Object({ success: Type.Literal(true), message: Type.String() });

export const NewsletterError = Type.Object(
  { success: Type.Literal(false), message: Type.String(), error: Type.Literal(true), code: Type.Integer() },
  { description: 'Newsletter errors: `success: false` plus the usual error fields' },
);

export const SubscribeBody = Type.Object(
  {
    email: Type.String({
      minLength: 1,
      maxLength: 254,
      description: 'The address to subscribe or unsubscribe',
    }),
    action: Type.Union([Type.Literal('subscribe'), Type.Literal('unsubscribe')]),
    frequency: Type.Optional(
      Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly'), Type.Literal('')], {
        description: 'subscribe only; default weekly (an empty form field counts as absent)',
      }),
    ),
  },
  { additionalProperties: true, description: 'Other fields (a form token, the submit button) are ignored.' },
);

export const TokenQuery = Type.Object({
  token: Type.String({ description: 'The signed token from the email link' }),
});

function describe(err: FastifyError | Error): {
  code: number;
  message: string;
  headers?: Record<string, string>;
} {
  if (err instanceof AppError) return { code: err.statusCode, message: err.message, headers: err.headers };
  const fastifyError = err as FastifyError;
  if (fastifyError.validation) return { code: 400, message: fastifyError.message };
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) return { code: status, message: fastifyError.message };
  return { code: 500, message: 'Internal server error' };
}

/** A person who clicked a link in a mail client gets a page; API clients get JSON. */
export const wantsHtml = (request: FastifyRequest) => /text\/html/i.test(request.headers.accept ?? '');

export function page(title: string, message: string, extra = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${extra}</body></html>`;
}

// The pages carry a token in their address and a form that acts on it: nothing may load from elsewhere, run script,
// frame them, or keep them in a shared cache.
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Answers with an HTML page (the response schemas describe the JSON answers only). */
export function sendPage(reply: FastifyReply, title: string, message: string, extra = ''): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', PAGE_CSP)
    .header('cache-control', 'no-store')
    .send(page(title, message, extra));
}

export function newsletterErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { code, message, headers } = describe(err);
  if (code >= 500) request.log.error({ err }, 'request failed');
  else request.log.info({ code, message }, 'request rejected');
  if (headers) reply.headers(headers);
  lingerOnUnreadBody(request, reply);
  reply.status(code);
  // The .php endpoint is called by the site's pages, which read JSON; the links are opened by people.
  if (wantsHtml(request) && !request.url.includes('.php')) return sendPage(reply, 'Newsletter', message);
  return reply.send({ success: false, message, error: true, code });
}
