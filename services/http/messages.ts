import type { ErrorObject } from 'ajv';

/**
 * Validation errors in plain words ("content must be a string", `Unknown action "translate": expected …`), with
 * at most a short prefix of the caller's input quoted: an error body must never echo a 10 kB field back.
 */

const QUOTE_MAX = 32;

/** A short, printable rendering of a value taken from a request, for a message. */
export function quote(value: unknown): string {
  if (typeof value === 'string') {
    const chars = [...value];
    const shown = chars.length > QUOTE_MAX ? `${chars.slice(0, QUOTE_MAX).join('')}…` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return `a value of type ${typeof value}`;
}

/** `/emails/1` → `emails[1]`, `/a/b` → `a.b`; the keys themselves are quoted when they are not plain names. */
export function fieldName(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const part of parts) {
    if (/^\d{1,10}$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${quote(part)}]`;
  }
  // Deeply nested paths are shortened too: the message quotes a prefix, never the whole input.
  return out.length > 120 ? `${out.slice(0, 120)}…` : out;
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

const typeWords = (type: unknown): string =>
  (Array.isArray(type) ? type : [type]).map((t) => ARTICLE[String(t)] ?? String(t)).join(' or ');

type AnyError = ErrorObject & { data?: unknown; parentSchema?: Record<string, unknown> };

/** The literal values a schema allows, when it is a const, an enum, or a union of consts. */
function literals(schema: Record<string, unknown> | undefined): unknown[] | undefined {
  if (!schema) return undefined;
  if ('const' in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  const branches = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(branches)) return undefined;
  const values: unknown[] = [];
  for (const branch of branches as Record<string, unknown>[]) {
    const inner = literals(branch);
    if (!inner) return undefined;
    values.push(...inner);
  }
  return values;
}

function rule(error: AnyError): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${typeWords(p.type)}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength': {
      const got = typeof error.data === 'string' ? ` (got ${error.data.length})` : '';
      return `must be at most ${String(p.limit)} characters${got}`;
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'finite':
      return 'is out of range';
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'pattern':
      return 'has an invalid format';
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'minItems':
      return `must have at least ${String(p.limit)} entries`;
    case 'uniqueItems':
      return 'must not repeat entries';
    default:
      return 'is invalid';
  }
}

/**
 * Ajv's errors as one sentence; `where` names the request part. Ajv runs with allErrors off, so there is one error,
 * except for a union (anyOf): the errors of its branches, then its own.
 */
export function describeValidationErrors(errors: AnyError[], where: string): string {
  const last = errors[errors.length - 1]!;
  if (last.keyword === 'anyOf' || last.keyword === 'oneOf') {
    if (!literals(last.parentSchema)) {
      // A union like null | integer(1..n): the branch that failed on something other than the type says why.
      const specific = errors.find(
        (e) => e.instancePath === last.instancePath && e.keyword !== 'type' && e !== last,
      );
      if (specific) return describeValidationError(specific, where);
      const types = ((last.parentSchema?.anyOf ?? last.parentSchema?.oneOf) as Record<string, unknown>[]).map(
        (b) => (b.type !== undefined ? typeWords(b.type) : undefined),
      );
      if (types.every((t) => t !== undefined)) {
        return describeValidationError({ ...last, keyword: 'type', params: { type: types } }, where);
      }
    }
  }
  return describeValidationError(last, where);
}

// Where a value came from, in the words of the API's documentation rather than Fastify's.
const PLACE_WORDS: Record<string, string> = { querystring: 'query', path: 'path', headers: 'header' };

function describeValidationError(error: AnyError, where: string): string {
  const prefix = where === 'body' ? '' : `Invalid ${PLACE_WORDS[where] ?? where}: `;
  const field = fieldName(error.instancePath);
  const subject = field === '' ? (where === 'body' ? 'The body' : `The ${where}`) : field;
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${prefix}${fieldName(error.instancePath, String(p.missingProperty))} is required`;
    case 'additionalProperties':
      return `${prefix}Unknown field ${quote(p.additionalProperty)}${field ? ` in ${field}` : ''}`;
    case 'maxItems': {
      const n = Array.isArray(error.data) ? error.data.length : '?';
      return `${prefix}${subject} holds ${n} entries; at most ${String(p.limit)} are allowed`;
    }
    case 'const':
    case 'enum':
    case 'anyOf':
    case 'oneOf': {
      const allowed = literals(error.parentSchema);
      if (allowed) {
        const list = allowed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
        return `${prefix}Unknown ${subject} ${quote(error.data)}: expected one of ${list}`;
      }
      return `${prefix}${subject} does not match any of the accepted forms`;
    }
    case 'type':
      if (field === '' && where === 'body') return 'The body must be a JSON object or a form';
      return `${prefix}${subject} ${rule(error)}`;
    default:
      return `${prefix}${subject} ${rule(error)}`;
  }
}
