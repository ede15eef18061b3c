import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../shared/errors.js';

/**
 * The JSON body parser of both services: Fastify's own (prototype poisoning refused), after a linear scan that
 * refuses bodies nested deeper than MAX_JSON_DEPTH, and refusing numbers that overflow to ±Infinity. Nothing downstream (validation, the text rule, logging,
 * JSON.stringify) then recurses further than that, so `[[[[…]]]]` 10,000 deep is a 400, not a stack overflow.
 */

export const MAX_JSON_DEPTH = 32;

/** The deepest nesting of arrays and objects in a JSON text, counted without parsing (strings skipped). */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * The path of the first number in parsed JSON that is not finite: JSON text has no Infinity, but a number past the
 * double range (`1e309`, 400 digits) parses as ±Infinity, which no field means and which Redis (a job's delay) and
 * PostgreSQL cannot store. Walked after parsing; the depth bound above keeps the walk shallow.
 */
export function nonFiniteNumber(value: unknown, path = ''): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path || '/';
  if (typeof value !== 'object' || value === null) return undefined;
  // Arrays by index: a list upload as JSON holds up to a million addresses (no pair allocated per item).
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') continue;
      const found = nonFiniteNumber(item, `${path}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, inner] of Object.entries(value)) {
    const found = nonFiniteNumber(inner, `${path}/${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonDepthExceeds(body as string, MAX_JSON_DEPTH)) {
      done(new ValidationError(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    parse(request, body as string, (err, parsed) => {
      if (err) return done(err, undefined);
      const at = nonFiniteNumber(parsed);
      if (at === undefined) return done(null, parsed);
      const field = at.split('/').filter(Boolean).slice(0, 3).join('.').slice(0, 32);
      done(new ValidationError(`${field || 'The body'} is a number out of range (past ±1.8e308)`), undefined);
    });
  });
}
