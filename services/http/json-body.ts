import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../../shared/errors.js';

/**
 * The JSON body parser of both services: Fastify's own (prototype poisoning refused), after a linear scan that
 * refuses bodies nested deeper than MAX_JSON_DEPTH. Nothing downstream (validation, the text rule, logging,
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

export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonDepthExceeds(body as string, MAX_JSON_DEPTH)) {
      done(new ValidationError(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    parse(request, body as string, done);
  });
}
