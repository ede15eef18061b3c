/**
 * The message of a 400 for a request that failed its schema, in words a caller can act on: the field by name,
 * what it must be, and for an enum the values it may take. Ajv's own text ("querystring must have required property
 * 'q'", "must be equal to one of the allowed values") names neither the place nor the choices.
 */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const PLACES: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
  body: 'body field',
};

/** `/emails/3/address` -> `emails[3].address`. */
function fieldName(instancePath: string): string {
  return instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
const listed = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');

function requirement(error: SchemaError): string {
  const p = error.params;
  switch (error.keyword) {
    case 'enum':
      return `must be one of ${listed(p.allowedValues as unknown[])}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'type':
      return `must be ${String(p.type)
        .split(',')
        .map((t) => article(t))
        .join(' or ')}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters long`;
    case 'minItems':
      return `must have at least ${String(p.limit)} entries`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} entries`;
    case 'pattern':
      // The text parameters' NUL guard (services/qa/schemas.ts NO_NUL) is no pattern a caller should read.
      return p.pattern === '^[^\\u0000]*$'
        ? 'must not contain NUL characters'
        : `must match ${String(p.pattern)}`;
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the accepted forms';
    default:
      return error.message ?? 'is invalid';
  }
}

/** One sentence for the first error: "Invalid query parameter sort: must be one of "newest", "votes"". */
export function validationMessage(errors: SchemaError[], context: string): string {
  const place = PLACES[context] ?? 'request field';
  // anyOf over literals (a union of strings) reports each branch's const error before the anyOf itself: list them.
  const first = errors[0];
  if (!first) return `Invalid ${place}`;
  const consts = errors.filter((e) => e.keyword === 'const' && e.instancePath === first.instancePath);
  const union = errors.find((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath);
  if (union && consts.length > 1) {
    const field = fieldName(first.instancePath);
    return `Invalid ${place}${field ? ` ${field}` : ''}: must be one of ${listed(consts.map((e) => e.params.allowedValue))}`;
  }
  if (first.keyword === 'required')
    return `Missing ${place} ${fieldName(`${first.instancePath}/${String(first.params.missingProperty)}`)}`;
  if (first.keyword === 'additionalProperties')
    return `Unknown ${place} ${fieldName(`${first.instancePath}/${String(first.params.additionalProperty)}`)}`;
  const field = fieldName(first.instancePath);
  if (!field) return `Invalid ${context === 'body' ? 'body' : place}: ${requirement(first)}`;
  return `Invalid ${place} ${field}: ${requirement(first)}`;
}
