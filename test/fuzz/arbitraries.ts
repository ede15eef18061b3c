import fc from 'fast-check';

/** Values a careless or hostile client sends, by kind; shared by every route of the fuzz suite. */

const specialNumberText = fc.constantFrom(
  '0',
  '-0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '1e309',
  '-1e309',
  'Infinity',
  '-Infinity',
  'NaN',
  '9'.repeat(500),
  '9'.repeat(10_000),
);

const weirdText = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDC00y',
  '\u202Eevil\u202C',
  'e\u0301\u0301\u0301',
  '🍺🍺',
  '<img src=x onerror=alert(1)>',
  "' OR 1=1 --",
  '%00',
  '__proto__',
  'constructor',
  'x'.repeat(10_000),
  'é'.repeat(300),
);

/** Any string: special numbers, special text, or random Unicode (lone surrogates included). */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  specialNumberText,
  weirdText,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 20 }),
);

const deep = (depth: number, kind: '[' | '{'): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = kind === '[' ? [value] : { a: value };
  return value;
};

/** Any JSON value, of the wrong type as often as the right one. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(
    0,
    -1,
    1,
    2147483648,
    1e300,
    -1e300,
    Number.MAX_SAFE_INTEGER + 2,
    0.5,
    true,
    false,
    null,
    [],
    {},
    ['hops'],
    deep(40, '['),
    deep(20, '{'),
  ),
  fc.integer(),
  fc.double(),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
);

/** Raw body texts that are not (good) JSON: broken, deeply nested, poisoned, duplicated keys. */
export const hostileBodyText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '{',
    '{"a":',
    'null',
    '[]',
    '"x"',
    '1e309',
    '{"a":1,"a":2}',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
    `{"action":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    '\uFEFF{}',
    '{"a":"\\u0000"}',
    '{"a":"\\ud800"}',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

export const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=latin1',
  '',
);
