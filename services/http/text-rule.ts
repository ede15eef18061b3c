import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError } from '../../shared/errors.js';
import { textProblem } from '../../shared/text-problem.js';
import { fieldName } from './messages.js';
import { markFormBody } from './validation.js';

/**
 * The text rule, applied in one place to every string a request carries (query, path parameters, body, and the
 * keys of their objects): a NUL character or a lone UTF-16 surrogate is a 400. PostgreSQL text cannot hold NUL
 * ("invalid byte sequence for encoding UTF8: 0x00"), and a lone surrogate has no UTF-8 form, so neither can be
 * stored or shown; refusing them says so at once instead of storing something other than what was sent.
 * Everything else (bidi controls, combining marks, any plane) is text and is kept as sent.
 */

// JSON bodies are at most 32 deep (json-body.ts) and forms are flat; the bound keeps this walk safe regardless.
const MAX_DEPTH = 64;

function check(value: unknown, path: string, where: string, depth: number): void {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    if (problem) throw new ValidationError(`${where}${fieldName(path) || 'The value'} ${problem}`);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  // Only parsed data is walked: a raw body (a stream handed to a route that parses it itself, a Buffer) is not.
  if (Buffer.isBuffer(value) || typeof (value as { pipe?: unknown }).pipe === 'function') return;
  if (depth > MAX_DEPTH) throw new ValidationError(`${where}The value is nested too deeply`);
  for (const [key, inner] of Object.entries(value)) {
    const problem = textProblem(key);
    if (problem) throw new ValidationError(`${where}A field name ${problem}`);
    check(inner, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, where, depth + 1);
  }
}

const FORM = /^application\/x-www-form-urlencoded\b/i;

/** Checks query, params and body before validation; marks form bodies for the coercing validator. */
export function textRuleHook(request: FastifyRequest): void {
  check(request.params, '', 'Invalid path: ', 0);
  check(request.query, '', 'Invalid query: ', 0);
  check(request.body, '', '', 0);
  if (FORM.test(request.headers['content-type'] ?? '')) markFormBody(request.body);
}

export function registerTextRule(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => textRuleHook(request));
}
