import { AjvCompiler } from '@fastify/ajv-compiler';
import type { AnySchema, ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv';
import { describeValidationErrors } from './messages.js';

/**
 * The one request validator of both services, set up once in the server factory.
 *
 * - Query strings and path parameters are text on the wire: they are coerced to the schema's types ("7" → 7).
 * - JSON bodies are validated strictly, as sent: `"title": 9007199254740993` is not a string and `"tags": "hops"`
 *   is not an array. No route writes its own type checks.
 * - Form bodies (application/x-www-form-urlencoded) are text like a query string, so they are coerced, but a
 *   repeated field (an array) is not turned into a scalar.
 * - Unknown query parameter names are ignored (cache busters such as `_=123`), and dropped here: a handler sees
 *   only the parameters its schema declares, so one that passes `request.query` on to a repository cannot
 *   forward a name another route validates and this one does not.
 * - A number in text is decimal digits (an optional minus sign, a fraction where the schema takes a non-integer):
 *   Ajv's coercion alone also takes "0x10" (16), "1e3", "0b11", " 7 " and a lone space (0).
 * - Coercion turns "Infinity", "1e309" or 400 digits into ±Infinity, which Ajv's bounds skip (they only compare
 *   finite numbers), and 20 digits into a nearby double: any non-finite number, or integer past 2^53, left after
 *   validation is refused here, whatever bounds the schema forgot.
 */

type Validate = ValidateFunction & { errors?: ErrorObject[] | null };
interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart: string;
}
type Options = { customOptions?: AjvOptions };
type Compile = (route: RouteSchema) => Validate;

// Bodies that came from a form: marked by the request hook (text-rule.ts) before validation runs.
const formBodies = new WeakSet<object>();
export const markFormBody = (body: unknown): void => {
  if (typeof body === 'object' && body !== null) formBodies.add(body);
};

const BASE = { removeAdditional: false, allErrors: false, useDefaults: true, verbose: true } as const;

/**
 * The path of the first number in a coerced value that is not finite, or is an integer past 2^53 (which no
 * longer stands for the digits sent: "9223372036854775807" would arrive as 9223372036854775808), if any.
 */
function nonFinite(value: unknown, path = ''): string | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) && !(Number.isInteger(value) && !Number.isSafeInteger(value))
      ? undefined
      : path;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const found = nonFinite(inner, `${path}/${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Wraps a coercing validator so that a value coerced to ±Infinity (or past 2^53) is a validation error. */
function finite(validate: Validate): Validate {
  const wrapped = ((data: unknown) => {
    if (!validate(data)) {
      wrapped.errors = validate.errors;
      return false;
    }
    const path = nonFinite(data);
    if (path === undefined) return true;
    wrapped.errors = [
      { instancePath: path, schemaPath: '#', keyword: 'finite', params: {}, message: 'is out of range' },
    ];
    return false;
  }) as Validate;
  return wrapped;
}

const INTEGER_TEXT = /^-?[0-9]+$/;
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

/** The schema's top-level properties that hold numbers (or arrays of them), with the type each must be. */
function numericProperties(schema: unknown): Map<string, 'integer' | 'number'> {
  const found = new Map<string, 'integer' | 'number'>();
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (typeof properties !== 'object' || properties === null) return found;
  for (const [name, property] of Object.entries(
    properties as Record<string, { type?: unknown; items?: unknown }>,
  )) {
    const type =
      property?.type === 'array' ? (property.items as { type?: unknown } | undefined)?.type : property?.type;
    if (type === 'integer' || type === 'number') found.set(name, type);
  }
  return found;
}

/** Wraps a coercing validator so that a number sent as text that is not plain decimal is a validation error. */
function decimalOnly(validate: Validate, schema: unknown): Validate {
  const numeric = numericProperties(schema);
  if (numeric.size === 0) return validate;
  const wrapped = ((data: unknown) => {
    if (typeof data === 'object' && data !== null) {
      for (const [name, type] of numeric) {
        const value = (data as Record<string, unknown>)[name];
        for (const text of Array.isArray(value) ? value : [value]) {
          if (typeof text !== 'string' || (type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(text))
            continue;
          wrapped.errors = [
            {
              instancePath: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
              schemaPath: `#/properties/${name}/type`,
              keyword: 'type',
              params: { type },
              message: `must be ${type}`,
            },
          ];
          return false;
        }
      }
    }
    const ok = validate(data);
    wrapped.errors = validate.errors;
    return ok;
  }) as Validate;
  return wrapped;
}

/**
 * Wraps a query-string validator so that, once the query is valid, parameters its schema does not declare are
 * removed. A schema that decides about other names itself (`additionalProperties`, `patternProperties`) keeps them.
 */
function declaredOnly(validate: Validate, schema: unknown): Validate {
  const shape = schema as { properties?: Record<string, unknown> } & Record<string, unknown>;
  if (typeof shape !== 'object' || shape === null || typeof shape.properties !== 'object') return validate;
  if ('additionalProperties' in shape || 'patternProperties' in shape) return validate;
  const declared = new Set(Object.keys(shape.properties));
  const wrapped = ((data: unknown) => {
    const ok = validate(data);
    wrapped.errors = validate.errors;
    if (ok && typeof data === 'object' && data !== null)
      for (const name of Object.keys(data))
        if (!declared.has(name)) delete (data as Record<string, unknown>)[name];
    return ok;
  }) as Validate;
  return wrapped;
}

/** Fastify's `schemaController.compilersFactory.buildValidator`. */
export function buildValidator(
  externalSchemas: Record<string, AnySchema | AnySchema[]>,
  options: Options = {},
): Compile {
  const pool = AjvCompiler();
  const custom = options.customOptions ?? {};
  const compiler = (coerceTypes: boolean | 'array') =>
    pool(externalSchemas, {
      ...options,
      customOptions: { ...custom, ...BASE, coerceTypes },
    }) as unknown as Compile;
  const coercing = compiler('array');
  const strict = compiler(false);
  const form = compiler(true);

  return (route) => {
    if (route.httpPart === 'querystring')
      return declaredOnly(decimalOnly(finite(coercing(route)), route.schema), route.schema);
    if (route.httpPart === 'params') return decimalOnly(finite(coercing(route)), route.schema);
    if (route.httpPart !== 'body') return finite(coercing(route));
    const json = strict(route);
    const fromForm = decimalOnly(finite(form(route)), route.schema);
    const validate = ((data: unknown) => {
      const chosen = typeof data === 'object' && data !== null && formBodies.has(data) ? fromForm : json;
      const ok = chosen(data);
      validate.errors = ok ? null : chosen.errors;
      return ok;
    }) as Validate;
    return validate;
  };
}

/** Fastify's `schemaErrorFormatter`: the first error in plain words, naming the field. */
export function schemaErrorFormatter(errors: ErrorObject[], dataVar: string): Error {
  return new Error(describeValidationErrors(errors, dataVar === 'params' ? 'path' : dataVar));
}
