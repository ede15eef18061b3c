/**
 * Black-box fuzzing of both HTTP services as real processes, over real sockets (unlike test/fuzz/routes.test.ts,
 * which injects requests into the apps in-process): what a client can break on the wire (connection resets, hangs,
 * crashes, parser-level refusals) shows only here.
 *
 *   npm run fuzz:http -- [--seed N] [--rounds N] [--concurrency N] [--database agora_fuzz_http]
 *                           [--rate-limits off|on] [--trust-proxy false|true|1] [--node-env development|production]
 *
 * It recreates a dedicated database (default agora_fuzz_http; BENCH_POSTGRES_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), seeds 150 questions, creates a user and an API key with every scope,
 * then starts the Q&A service, the verification service and every worker as child processes (QUEUE_PREFIX
 * `{fuzz-<pid>}`, rate limits off, Redis at BENCH_REDIS_URL, default redis://127.0.0.1:6379; keys deleted at the end).
 * Routes and their parameters come from the OpenAPI documents the two services serve, so a new route is fuzzed
 * without being listed here. Each request is built from one class of hostile input:
 *
 *   query-number, query-string, query-structure, path, body-field, body-raw, content-type, encoding (gzip and
 *   deflate bombs, encodings that do not match the bytes), header, method, cursor, raw-wire (also chunk sizes,
 *   100-continue, HTTP/1.0 pipelining, bytes that are not UTF-8), upload (POST /lists: malformed CSV and text,
 *   lines of 10 MB, rows of 100,000 cells, chunked), download (GET /lists/{id}/results: formats, Accept, Range,
 *   conditional headers), admin (the panel's pages and forms and its queue board's API, signed in)
 *
 * and sent --rounds times per route and class (the one-route classes upload and download five times as often) with fresh random choices (seeded: --seed reproduces a run). Recorded
 * as a defect: any 5xx, a connection reset or closed before a complete answer, no answer within 5 s (POST /verify and
 * /bulk-verify 70 s, POST /api/ai.php 25 s: they wait for a worker's job by design), a 4xx whose body
 * is not exactly `{error: true, message, code}` (code = status; the newsletter's add `success: false`), a status
 * other than the documented one where the documentation names it (405 for a standard method the path does not take,
 * 400 for a declared query parameter given twice), a child
 * process that exits, and every log line of level error or fatal a child writes. Exit status 1 when any was found.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { parseBenchArgs } from './lib/args.js';
import { ADMIN_URL, recreateDatabase } from './lib/postgres.js';
import { benchEnv, freePort, ROOT, runScript, stopChild, waitForHealth } from './lib/processes.js';
import { deleteKeys } from './lib/redis.js';
import { QUEUE_NAMES } from '../shared/queues/names.js';

const args = parseBenchArgs(
  {
    seed: [Math.floor(Math.random() * 2 ** 31), 0, 2 ** 31],
    rounds: [12, 1, 10_000],
    concurrency: [16, 1, 256],
  },
  { database: 'agora_fuzz_http', 'rate-limits': 'off', 'trust-proxy': 'false', 'node-env': 'development' },
);
const TIMEOUT_MS = 5000;
// Two routes answer when a worker's job does, by design: POST /verify and /bulk-verify up to the probe deadline
// (60 s), POST /api/ai.php up to AI_DEADLINE_MS (20 s; the built-in models take seconds under load).
const SLOW_ROUTES: [RegExp, number][] = [
  [/^\/(bulk-)?verify\b/, 70_000],
  [/^\/api\/ai\.php/i, 25_000],
];
const timeoutFor = (path: string) => SLOW_ROUTES.find(([pattern]) => pattern.test(path))?.[1] ?? TIMEOUT_MS;

// ---------------------------------------------------------------------------------------------------------------
// Seeded choices

let state = args.seed >>> 0;
function random(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

// ---------------------------------------------------------------------------------------------------------------
// Hostile values. Query and path values are written as they go on the wire (already %-encoded where needed).

const NUMBERS_WIRE = [
  '0',
  '-1',
  '-0',
  '1.5',
  '1.0',
  '1.',
  '.5',
  '1e3',
  '1E3',
  '1e309',
  '-1e309',
  '0x10',
  '0X1f',
  '0b11',
  '0o7',
  'Infinity',
  '-Infinity',
  'NaN',
  '9'.repeat(500),
  '00001',
  '+5',
  '%205',
  '5%20',
  '%20',
  '%09',
  '2147483647',
  '2147483648',
  '-2147483649',
  '4294967296',
  '9007199254740991',
  '9007199254740993',
  '18446744073709551616',
  '1_000',
  '1%2C2',
  '%D9%A1',
  'null',
  'true',
  '',
  '1%00',
  '%EF%BC%91',
  '1e-7',
  '-',
  '--1',
  '0.0000001',
];
const STRINGS_WIRE = [
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%ED%B0%80',
  'x%ED%A0%80y',
  '%C0%AF',
  '%C0%80',
  '%FF',
  '%FE%FF',
  '%E2%82',
  '%F4%90%80%80',
  '%F0%9F%98%80',
  '%EF%BB%BF',
  '%EF%BF%BF',
  '%E2%80%AE%E2%80%8F',
  `e${'%CC%81'.repeat(300)}`,
  '%D8%A7%D9%84',
  'a'.repeat(5000),
  'b'.repeat(70_000),
  '%',
  '%zz',
  '%%',
  '%2',
  '%5C',
  '%22',
  "'",
  '%3Cscript%3E',
  '%24%7B%7D',
  '..',
  '%2E%2E',
  '%2F',
  '..%2F..%2Fetc',
  '%0D%0ASet-Cookie:%20a=b',
  '%09',
  '+',
  '%20',
  '*',
  '%2A',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '%5Bobject%20Object%5D',
  "1'%20OR%20'1'='1",
  '%E2%80%8B',
  'NULL',
  'undefined',
  '-',
  '%EF%BC%A1',
  '%C7%85',
  `${'%F0%9F%98%80'.repeat(400)}`,
  '%01%02%1F%7F',
  '%0A',
  ';',
  ',',
  ',,',
];
const ALL_WIRE = [...NUMBERS_WIRE, ...STRINGS_WIRE];

// 80 MiB of zeros in about 80 KiB: past every body limit (list uploads: 64 MiB) once inflated.
const BOMB = gzipSync(Buffer.alloc(80 * 1024 * 1024));
const BOMB_DEFLATE = deflateSync(Buffer.alloc(80 * 1024 * 1024));

const deep = (n: number, open = '[', close = ']') => open.repeat(n) + close.repeat(n);
const JSON_VALUES: (() => string)[] = [
  () => '0',
  () => '-1',
  () => '-0',
  () => '1.5',
  () => '1e308',
  () => '1e309',
  () => '-1e309',
  () => '2147483648',
  () => '9007199254740993',
  () => '9'.repeat(500),
  () => '0.1e-400',
  () => '1E+2',
  () => '1.0',
  () => '-0.0',
  () => '1e400',
  () => '10e-1',
  () => '"\\ud800"',
  () => '{"\\ud800":1}',
  () => `{${Array.from({ length: 2000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
  () => deep(5000),
  () => '"\\u0000"',
  () => '"\\ud800"',
  () => '"\\udc00x"',
  () => '""',
  () => '" "',
  () => '"\\t\\n"',
  () => JSON.stringify('x'.repeat(100_000)),
  () => JSON.stringify('é'.repeat(20_000)),
  () => '"\\u202e\\u200f"',
  () => JSON.stringify('a\u0301'.repeat(2000)),
  () => '"<script>alert(1)</script>"',
  () => '"javascript:x"',
  () => '"http://127.0.0.1:6379/"',
  () => '"file:///etc/passwd"',
  () => '"a@b"',
  () => '"@"',
  () => '"a@b.c"',
  () => 'null',
  () => 'true',
  () => 'false',
  () => '[]',
  () => '{}',
  () => '[1,2]',
  () => '["a","a"]',
  () => `[${Array(5000).fill('"t"').join(',')}]`,
  () => `[${Array(200).fill('1').join(',')}]`,
  () => deep(20),
  () => deep(31, '{"a":', '}').replace(/\{"a":\}/, '{"a":1}'),
  () => '{"__proto__":{"admin":true}}',
  () => '{"constructor":{"prototype":{"x":1}}}',
  () => '[null]',
  () => '[{}]',
  () => '[[]]',
  () => '"1"',
  () => '"-5"',
  () => '"2024-01-01T00:00:00Z"',
  () => '"99999-12-31"',
  () => '"0000-00-00"',
  () => '"2000-01-01T00:00:00Z"',
  () => '"+275760-09-13T00:00:00Z"',
  () => '"2024-02-30T25:61:00Z"',
  () => '"1e3"',
  () =>
    JSON.stringify(
      pick([
        'http://[::1]:99999/',
        'http://a b/',
        'http://0x7f.1/',
        'http://ex%zzample.com/',
        'https://user:pw@127.0.0.1/',
        'http://%00/',
        'gopher://x/',
        'http://localhost:0/',
        'http://[fe80::1%25eth0]/',
        `http://${'a'.repeat(300)}.com/`,
        'http://xn--/',
        'http://\u00e9.com/',
        'http://127.1/',
        'http://2130706433/',
        'HTTP://EXAMPLE.COM',
        '//example.com',
        'http:',
        'http://a:-1/',
      ]),
    ),
  () =>
    JSON.stringify(
      pick([
        'a@' + 'b'.repeat(250) + '.com',
        'a'.repeat(65) + '@x.com',
        '"a b"@x.com',
        'a@[127.0.0.1]',
        'a@[IPv6:::1]',
        'a@-x.com',
        'a@x..com',
        '@@',
        'a@b@c',
        'a@\u00e9.com',
        'A@X.COM',
        'a+b@x.com',
        ' a@x.com ',
        'a@x.com\n',
        'a@localhost',
        'a@123',
      ]),
    ),
];
const jsonValue = () => pick(JSON_VALUES)();

// ---------------------------------------------------------------------------------------------------------------
// Raw HTTP client: exactly the bytes asked for, one connection per request (Connection: close).

interface Answer {
  status?: number;
  headers: Record<string, string>;
  body: Buffer;
  error?: string;
  timedOut?: boolean;
  ms: number;
}

function dechunk(data: Buffer): Buffer {
  // (a Buffer of any backing store)
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** Whether `data` holds a whole answer: headers, then Content-Length bytes or a chunked body's last chunk. */
function complete(data: Buffer, head: boolean): boolean {
  const split = data.indexOf('\r\n\r\n');
  if (split < 0) return false;
  const headers = data.subarray(0, split).toString('latin1');
  const status = Number(headers.split(' ')[1]);
  if (status === 100) return complete(data.subarray(split + 4), head);
  if (head || status === 204 || status === 304) return true;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(headers);
  if (length) return data.length - split - 4 >= Number(length[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(headers))
    return /(^|\r\n)0\r\n\r\n$/.test(data.subarray(split + 4).toString('latin1'));
  return false;
}

function send(port: number, request: Buffer, timeoutMs = TIMEOUT_MS): Promise<Answer> {
  const head = request.subarray(0, 5).toString('latin1') === 'HEAD ';
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let done = false;
    const finish = (timedOut = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      let data = Buffer.concat(chunks);
      // Interim answers (100 Continue) come before the answer.
      while (
        /^HTTP\/1\.[01] 1\d\d /.test(data.subarray(0, 13).toString('latin1')) &&
        data.indexOf('\r\n\r\n') >= 0
      )
        data = data.subarray(data.indexOf('\r\n\r\n') + 4);
      const split = data.indexOf('\r\n\r\n');
      const ms = Date.now() - started;
      if (split < 0)
        return resolve({ headers: {}, body: Buffer.alloc(0), error: error ?? 'closed', timedOut, ms });
      const lines = data.subarray(0, split).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body: Buffer = head ? Buffer.alloc(0) : data.subarray(split + 4);
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
      const length = Number(headers['content-length'] ?? NaN);
      if (Number.isFinite(length) && body.length > length) body = body.subarray(0, length);
      const incomplete = !head && Number.isFinite(length) && body.length < length && !timedOut;
      resolve({
        status,
        headers,
        body,
        ms,
        timedOut,
        ...(error || incomplete ? { error: error ?? `body ${body.length} of ${length} bytes` } : {}),
      });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    // A keep-alive answer does not end the connection: the first complete answer ends the exchange.
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (complete(Buffer.concat(chunks), head)) finish();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
      finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    socket.write(request, () => {});
  });
}

interface Spec {
  service: 'qa' | 'verify';
  cls: string;
  method: string;
  path: string;
  headers?: [string, string][];
  body?: Buffer | string;
  /** The whole request as bytes (raw-wire class); method/path then only describe it. */
  raw?: Buffer;
  /** The route is outside the JSON API (the panel, docs): only status and transport are checked. */
  loose?: boolean;
  /** The statuses the documentation promises for this request, when it promises one. */
  expect?: number[];
}

const STANDARD_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** The methods each documented path takes ("service template" → methods; GET implies HEAD). */
const METHODS_OF = new Map<string, Set<string>>();

function bytesOf(spec: Spec, host: string): Buffer {
  if (spec.raw) return spec.raw;
  const body =
    spec.body === undefined ? undefined : Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(spec.body);
  const headers: [string, string][] = [['Host', host], ['Connection', 'close'], ...(spec.headers ?? [])];
  if (body && !headers.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k)))
    headers.push(['Content-Length', String(body.length)]);
  const head = `${spec.method} ${spec.path} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
}

// ---------------------------------------------------------------------------------------------------------------
// Routes from the OpenAPI documents

interface Param {
  name: string;
  in: string;
  type: string;
}
interface Route {
  service: 'qa' | 'verify';
  method: string;
  template: string;
  params: Param[];
  bodyTypes: string[];
  bodyFields: string[];
}

type Json = Record<string, unknown>;
function resolveRef(doc: Json, schema: Json | undefined): Json | undefined {
  let s = schema;
  for (let i = 0; s && typeof s.$ref === 'string' && i < 10; i++) {
    const path = (s.$ref as string).replace(/^#\//, '').split('/');
    s = path.reduce<unknown>((o, k) => (o as Json)?.[k], doc) as Json;
  }
  return s;
}

function routesOf(doc: Json, service: 'qa' | 'verify'): Route[] {
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const operation = op as Json;
      const params = ((operation.parameters ?? []) as Json[]).map((p) => {
        const schema = resolveRef(doc, p.schema as Json) ?? {};
        const type = (schema.type as string) ?? (schema.anyOf ? 'anyOf' : 'string');
        return { name: p.name as string, in: p.in as string, type };
      });
      const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
      const bodySchema = resolveRef(doc, (Object.values(content)[0]?.schema as Json) ?? undefined);
      routes.push({
        service,
        method: method.toUpperCase(),
        template,
        params,
        bodyTypes: Object.keys(content),
        bodyFields: Object.keys((bodySchema?.properties as Json) ?? {}),
      });
    }
  }
  return routes;
}

// ---------------------------------------------------------------------------------------------------------------
// Request generators, one per class

interface World {
  key: string;
  questionId: number;
  answerId: number;
  ownQuestionId: number;
  ownAnswerId: number;
  userId: number;
  tagSlug: string;
  webhookId: number;
  pollId: number;
  listId: string;
  keptListId: string;
  cursors: Record<string, string>;
  /** A signed-in admin panel session: its cookies and a CSRF token of it. */
  admin: { cookie: string; csrf: string; origin: string };
}

function goodPathValue(world: World, route: Route, name: string): string {
  if (name === 'slug') return world.tagSlug;
  if (name === 'delivery') return '1';
  // Writes that only the author may make go to the fuzzer's own posts.
  const own =
    route.method !== 'GET' && !route.template.endsWith('/comments') && !route.template.endsWith('/vote');
  if (route.template.startsWith('/api/answers')) return String(own ? world.ownAnswerId : world.answerId);
  if (route.template.startsWith('/api/users')) return String(world.userId);
  if (route.template.startsWith('/api/webhooks')) return String(world.webhookId);
  if (route.template.startsWith('/api/polls')) return String(world.pollId);
  if (route.template.startsWith('/lists')) return world.listId;
  return String(route.method === 'PATCH' ? world.ownQuestionId : world.questionId);
}

function fillPath(world: World, route: Route, override?: (name: string) => string): string {
  return route.template.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    override ? override(name) : goodPathValue(world, route, name),
  );
}

const auth = (world: World, route: Route): [string, string][] =>
  route.service === 'verify' ? [['X-API-Key', world.key]] : [['Authorization', `Bearer ${world.key}`]];

const hasBody = (route: Route) => route.bodyTypes.length > 0;

function goodBody(route: Route): Json {
  const t = route.template;
  if (t === '/verify') return { email: 'someone@example.com' };
  if (t === '/bulk-verify') return { emails: ['a@example.com', 'b@example.com'] };
  if (t === '/api/questions')
    return {
      title: 'How long should a lager ferment at 10 C?',
      content: 'Some content here for the body of the question, long enough.',
      tags: ['beer'],
    };
  if (t.endsWith('/answers'))
    return { content: 'An answer with enough words to pass the minimum length rule.' };
  if (t.endsWith('/comments')) return { content: 'A comment long enough to pass.' };
  if (t.endsWith('/vote')) return { value: 1 };
  if (t === '/api/webhooks' || t === '/api/webhooks/{id}')
    return { url: 'http://127.0.0.1:9/hook', events: ['question.created'], tags: ['beer'] };
  if (t === '/api/polls')
    return {
      title: 'Which hop?',
      options: ['Citra', 'Mosaic'],
      allow_change: true,
      closes_at: '2099-01-01T00:00:00Z',
    };
  if (t === '/api/poll-vote.php') return { poll_id: 1, option_id: 2 };
  if (t === '/api/newsletter-subscribe.php')
    return { email: 'someone@example.com', action: 'subscribe', frequency: 'daily' };
  if (t === '/api/ai.php')
    return {
      action: pick(['spam_check', 'quality_check', 'suggest_tags', 'chat']),
      content: 'How long should a lager ferment?',
      title: 'Lager time',
      limit: 3,
    };
  if (t === '/lists') return { emails: ['a@example.com', 'b@example.org'], name: 'fuzz', max_age: 60 };
  if (t === '/api/questions/{id}') return { title: 'An edited title that is long enough', tags: ['beer'] };
  if (t === '/api/answers/{id}') return { content: 'An edited answer with enough words to pass the rule.' };
  return {};
}

/** Values that make a required query parameter valid, so that the other parameters' checks are reached. */
const GOOD_QUERY: Record<string, () => string> = {
  q: () => pick(['lager', 'hops%20yeast', 'user', '%22quoted%20phrase%22%20-x']),
  title: () => 'lager%20fermentation%20time',
  token: () => pick(['abc', 'a'.repeat(43)]),
  host: () => pick(['example.com', '127.0.0.1']),
};
const goodQuery = (route: Route) =>
  route.params
    .filter((p) => p.in === 'query' && GOOD_QUERY[p.name])
    .map((p) => `${p.name}=${GOOD_QUERY[p.name]!()}`);
const withGoodQuery = (route: Route, path: string) => {
  const good = goodQuery(route);
  return good.length ? `${path}${path.includes('?') ? '&' : '?'}${good.join('&')}` : path;
};

function queryString(route: Route, mutate: (p: Param) => string | undefined): string {
  const pairs: string[] = [];
  for (const p of route.params.filter((x) => x.in === 'query')) {
    const value = mutate(p) ?? (GOOD_QUERY[p.name] ? GOOD_QUERY[p.name]!() : undefined);
    if (value !== undefined) pairs.push(`${p.name}=${value}`);
  }
  return pairs.length ? `?${pairs.join('&')}` : '';
}

type Generator = (world: World, route: Route) => Spec | undefined;

const base = (world: World, route: Route, cls: string, extra: Partial<Spec> = {}): Spec => {
  const spec: Spec = {
    service: route.service,
    cls,
    method: route.method,
    path: withGoodQuery(route, fillPath(world, route)),
  };
  spec.headers = auth(world, route);
  if (hasBody(route)) {
    spec.headers.push(['Content-Type', 'application/json']);
    spec.body = JSON.stringify(goodBody(route));
  }
  return { ...spec, ...extra, headers: [...spec.headers, ...(extra.headers ?? [])] };
};

/** Classes of one route each: more rounds, so that their many cases are drawn. */
const SINGLE_ROUTE_CLASSES = ['upload', 'download'];

const GENERATORS: Record<string, Generator> = {
  'query-number': (world, route) => {
    const qs = route.params.filter((p) => p.in === 'query');
    if (qs.length === 0) return undefined;
    const target = pick(qs);
    return base(world, route, 'query-number', {
      path:
        fillPath(world, route) + queryString(route, (p) => (p === target ? pick(NUMBERS_WIRE) : undefined)),
    });
  },
  'query-string': (world, route) => {
    const qs = route.params.filter((p) => p.in === 'query');
    if (qs.length === 0) return undefined;
    return base(world, route, 'query-string', {
      path: fillPath(world, route) + queryString(route, () => (random() < 0.5 ? pick(ALL_WIRE) : undefined)),
    });
  },
  'query-structure': (world, route) => {
    const qs = route.params.filter((p) => p.in === 'query').map((p) => p.name);
    const name = qs.length ? pick(qs) : 'x';
    const v = pick(ALL_WIRE);
    const shapes = [
      `${name}=1&${name}=2`,
      `${name}=1&${name}=1`,
      `${name}[]=1`,
      `${name}[]=`,
      `${name}[a]=1`,
      `${name}[0]=1&${name}[1]=2`,
      `__proto__=1`,
      `__proto__[x]=1`,
      `constructor[prototype][x]=1`,
      `${name}`,
      `${name}=`,
      `=${v}`,
      `&&&`,
      `${name}=${v}&${name}=${v}`,
      `${name}=1;${name}=2`,
      Array.from({ length: 2000 }, (_, i) => `p${i}=1`).join('&'),
      `${name}=${'a'.repeat(20_000)}`,
      `${encodeURIComponent(name)}%00=1`,
      `%ED%A0%80=1`,
      `${name}=%`,
      `%=1`,
      `${name}=1%26${name}%3D2`,
      `?${name}=1`,
      `${name}=1#frag`,
      `${name}.x=1`,
      `${name.toUpperCase()}=1`,
    ];
    const good = random() < 0.7 ? goodQuery(route).filter((g) => !g.startsWith(`${name}=`)) : [];
    const shape = pick(shapes);
    const spec = base(world, route, 'query-structure', {
      path: `${fillPath(world, route)}?${[...good, shape].join('&')}`,
    });
    // A declared parameter given twice is a 400, even with the same value (docs/qa-api.md).
    if (qs.includes(name) && (shape === `${name}=1&${name}=2` || shape === `${name}=1&${name}=1`))
      spec.expect = [400, 401, 403, 404];
    return spec;
  },
  path: (world, route) => {
    const hasParams = /\{/.test(route.template);
    const shapes = [
      () => pick(ALL_WIRE) || 'x',
      () => '1;2;3',
      () => '1;;2',
      () => ';',
      () => '1;',
      () => ';1',
      () => '1;1;1',
      () => Array.from({ length: 101 }, (_, i) => i + 1).join(';'),
      () => Array.from({ length: 100 }, (_, i) => i + 1).join(';'),
      () => Array.from({ length: 100 }, () => '2147483647').join(';'),
      () => '1%3B2',
      () => '1%2F2',
      () => '%2F',
      () => '..%2F1',
      () => '.',
      () => '..',
      () => '1.json',
      () => '1%20',
      () => '%201',
      () => '1' + '0'.repeat(1200),
      () => '9'.repeat(1099),
      () => 'a'.repeat(1101),
      () => 'x'.repeat(100_000),
      () => '-1',
      () => '0',
      () => '00000000000000000001',
      () => '1e2',
      () => '0x1',
      () => '1;x',
      () => '1;-1',
      () => '1;2147483648',
      () => `1;%00`,
      () => '%ED%A0%80;1',
      () => '1,2',
    ];
    if (hasParams) {
      const value = pick(shapes)();
      return base(world, route, 'path', {
        path: withGoodQuery(
          route,
          fillPath(world, route, () => value),
        ),
      });
    }
    // No parameter: odd forms of the fixed path itself.
    const p = route.template;
    const variants = [
      `${p}/`,
      `${p}//`,
      `/.${p}`,
      `${p}/.`,
      `${p}/..${p}`,
      p.replace(/\//g, '%2F'),
      `${p}%00`,
      `/${p}`,
      p.toUpperCase(),
      `${p};x=1`,
      `${p}%20`,
      `${p}/${'a'.repeat(5000)}`,
      `${p}.json`,
      `${p}%2F`,
    ];
    return base(world, route, 'path', { path: pick(variants) });
  },
  'body-field': (world, route) => {
    if (!hasBody(route)) return undefined;
    const good = goodBody(route);
    const fields = [...new Set([...route.bodyFields, ...Object.keys(good)])];
    const text = JSON.stringify(good);
    // Replace one or two fields with a hostile JSON value (kept as text so 1e309 and 500 digits survive).
    const targets = new Set([
      pick(fields.length ? fields : ['x']),
      random() < 0.3 ? pick(fields.length ? fields : ['x']) : '',
    ]);
    const entries = Object.entries(good)
      .filter(([k]) => !targets.has(k))
      .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
    for (const t of targets) if (t) entries.push(`${JSON.stringify(t)}:${jsonValue()}`);
    if (random() < 0.15) entries.push(`"__proto__":${jsonValue()}`);
    if (random() < 0.1)
      entries.push(`${JSON.stringify(pick(fields.length ? fields : ['x']))}:${jsonValue()}`); // duplicate key
    if (random() < 0.1) entries.push(`"x\\u0000":1`);
    void text;
    return base(world, route, 'body-field', { body: `{${entries.join(',')}}` });
  },
  'body-raw': (world, route) => {
    if (!hasBody(route) && route.method === 'GET') return undefined;
    const bodies = [
      '',
      ' ',
      '{',
      '}',
      '[',
      'null',
      'true',
      '0',
      '"x"',
      '[]',
      '[{}]',
      '{}',
      '{"a":1,}',
      "{'a':1}",
      '{"a":01}',
      '{"a":NaN}',
      '{"a":Infinity}',
      '\uFEFF{}',
      '{}{}',
      '{} x',
      deep(33),
      deep(32),
      deep(100_000),
      deep(2000, '{"a":', '}'),
      '{"a":"\\x"}',
      '{"a":"\\u12"}',
      '{"a":"\\ud800"}',
      `{"a":"${'\\u0000'.repeat(1000)}"}`,
      '\u0000',
      `{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":1`).join(',')}}`,
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      JSON.stringify(goodBody(route)).slice(0, -1),
      'a'.repeat(2_000_000),
      `{"x":"${'a'.repeat(1_100_000)}"}`,
    ];
    const raw: (string | Buffer)[] = [
      ...bodies,
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
      Buffer.from('{"a":"\xff\xfe"}', 'latin1'),
      Buffer.from('{"title":"\xed\xa0\x80"}', 'latin1'),
      Buffer.from('{"a":"\xc0\xaf"}', 'latin1'),
    ];
    return base(world, route, 'body-raw', {
      headers: [['Content-Type', 'application/json']],
      body: pick(raw),
    });
  },
  'content-type': (world, route) => {
    const json = JSON.stringify(goodBody(route));
    const form = Object.entries(goodBody(route))
      .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
      .join('&');
    const cases: [string | undefined, string | Buffer, [string, string][]?][] = [
      [undefined, json],
      ['text/plain', json],
      ['text/plain; charset=utf-8', 'hello'],
      ['application/json; charset=utf-16', json],
      ['application/json; charset=latin1', json],
      ['application/json;charset="utf-8"', json],
      ['APPLICATION/JSON', json],
      ['application/json ; x=y', json],
      ['application/jsonp', json],
      ['application/json-patch+json', json],
      ['application/merge-patch+json', json],
      ['application/vnd.api+json', json],
      ['application/x-www-form-urlencoded', form],
      ['application/x-www-form-urlencoded', json],
      ['application/x-www-form-urlencoded', `${form}&${form}`],
      ['application/x-www-form-urlencoded', 'a[b]=1&a[c]=2&__proto__[x]=1'],
      ['application/x-www-form-urlencoded', '%ED%A0%80=%00'],
      ['application/x-www-form-urlencoded', '%'],
      ['application/x-www-form-urlencoded', 'a=%zz'],
      ['application/x-www-form-urlencoded', ''],
      ['application/x-www-form-urlencoded', Array.from({ length: 5000 }, (_, i) => `k${i}=1`).join('&')],
      ['application/x-www-form-urlencoded; charset=iso-8859-1', 'email=%E9'],
      [
        'multipart/form-data; boundary=x',
        '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
      ],
      ['multipart/form-data', 'garbage'],
      ['text/csv', 'email\na@example.com\n'],
      ['text/csv', '"unterminated\n'],
      ['text/csv', '\u0000\u0000'],
      ['text/csv', `email\n${'a'.repeat(100_000)}@x.com\n`],
      ['text/csv', Buffer.from([0xff, 0xfe, 0x00, 0x61])],
      ['text/csv; charset=utf-16le', 'email\n'],
      ['text/csv', 'email,email\n1,2\n'],
      ['text/csv', ''],
      ['text/csv', '\n\n\n'],
      ['text/plain', 'a@example.com\r\nb@example.com'],
      ['application/octet-stream', Buffer.from([0, 1, 2, 3])],
      ['application/xml', '<a/>'],
      ['*/*', json],
      ['', json],
      [';', json],
      ['application/json; boundary=', json],
      ['a'.repeat(5000), json],
      ['application/json', gzipSync(json), [['Content-Encoding', 'gzip']]],
      ['application/json', Buffer.from('garbage'), [['Content-Encoding', 'gzip']]],
      ['application/json', json, [['Content-Encoding', 'br']]],
      ['application/json', json, [['Content-Encoding', 'identity']]],
      ['application/json', json, [['Content-Encoding', 'deflate, gzip']]],
      [
        'application/json',
        Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff]),
        [['Content-Encoding', 'gzip']],
      ],
    ];
    if (route.method === 'GET' && random() < 0.7) return undefined;
    const [type, body, extra] = pick(cases);
    const spec = base(world, route, 'content-type');
    spec.headers = [
      ...auth(world, route),
      ...(type === undefined ? [] : [['Content-Type', type] as [string, string]]),
      ...(extra ?? []),
    ];
    spec.body = body;
    return spec;
  },
  header: (world, route) => {
    const keys = [
      '',
      'x',
      'agora_',
      'agora_x',
      world.key.slice(0, -1),
      `${world.key}x`,
      world.key.toUpperCase(),
      `${world.key} `,
      ` ${world.key}`,
      'a'.repeat(10_000),
      'agora_' + 'a'.repeat(200),
      '\u00e9\u00e8',
      'Bearer',
      `${world.key},${world.key}`,
      world.key.replace(/_/g, '-'),
      'agora_irwgfxainf8d_' + 'A'.repeat(43),
      'null',
      '%00',
    ];
    const key = pick(keys);
    const headerCases: (() => [string, string][])[] = [
      () => [['Authorization', `Bearer ${key}`]],
      () => [['Authorization', key]],
      () => [['Authorization', `Basic ${key}`]],
      () => [['Authorization', 'Bearer']],
      () => [['Authorization', `bearer ${world.key}`]],
      () => [['Authorization', `Bearer  ${world.key}`]],
      () => [['X-API-Key', key]],
      () => [
        ['X-API-Key', world.key],
        ['X-API-Key', world.key],
      ],
      () => [
        ['Authorization', `Bearer ${world.key}`],
        ['Authorization', 'Bearer x'],
      ],
      () => [
        ['X-API-Key', world.key],
        ['Authorization', 'Bearer x'],
      ],
      () => [
        ['Authorization', `Bearer ${world.key}`],
        ['X-API-Key', 'x'],
      ],
      () => [
        [
          'If-None-Match',
          pick([
            '*',
            'W/"x"',
            '"',
            'W/',
            ',,,',
            'W/"' + 'a'.repeat(8000) + '"',
            '"a", W/"b", *',
            'garbage',
            '\u00ff',
            Array.from({ length: 1000 }, (_, i) => `"${i}"`).join(', '),
            Array.from({ length: 500 }, () => 'W/"x", *').join(', '),
          ]),
        ],
      ],
      () => [['If-Modified-Since', pick(['garbage', 'Thu, 01 Jan 1970 00:00:00 GMT', '9'.repeat(50)])]],
      () => [
        [
          'Range',
          pick([
            'bytes=0-0',
            'bytes=-1',
            'bytes=999999999-',
            'bytes=5-1',
            'garbage',
            'bytes=0-1,2-3,4-5',
            'items=0-10',
          ]),
        ],
      ],
      () => [
        ['If-Range', 'W/"x"'],
        ['Range', 'bytes=0-1'],
      ],
      () => [
        [
          'Accept',
          pick([
            '',
            '*/*',
            'text/html',
            'application/xml',
            'image/png;q=1, */*;q=0',
            'application/json;q=0',
            'a'.repeat(8000),
            ';;;',
            'application/*',
          ]),
        ],
      ],
      () => [
        [
          'Accept-Encoding',
          pick([
            'gzip',
            'br',
            'deflate',
            'zstd',
            '*',
            'identity;q=0',
            'gzip;q=x',
            ', ,',
            'a'.repeat(8000),
            '*;q=0',
          ]),
        ],
      ],
      () => [['Accept-Charset', 'utf-16']],
      () => [['Accept-Language', 'x'.repeat(8000)]],
      () => [['X-Forwarded-For', pick(['garbage', '1.2.3.4, ::1', '::ffff:1.2.3.4', '999.1.1.1', ''])]],
      () => [['X-Request-Id', pick(['%00', 'a'.repeat(200), 'ok-1', ''])]],
      () => [['Origin', pick(['null', 'http://evil', '*', ''])]],
      () => [['Cookie', pick(['a', '=', 'agora_admin=%', 'x'.repeat(8000), 'a=b; a=c'])]],
      () => [['X-Huge', 'h'.repeat(70_000)]],
      () => Array.from({ length: 300 }, (_, i) => [`X-H${i}`, 'v'] as [string, string]),
      () => [['Expect', pick(['100-continue', 'something', ''])]],
      () => [['Content-Length', pick(['-1', 'abc', '1, 2', '99999999999999999999'])]],
      () => [['Transfer-Encoding', pick(['chunked, gzip', 'gzip', 'identity', 'x'])]],
      () => [['Idempotency-Key', pick(['', 'a'.repeat(10_000), '%00', '\u00ff'])]],
      () => [['Host', pick(['', 'a'.repeat(5000), 'localhost:99999', '[::1', 'évil'])]],
    ];
    const spec = base(world, route, 'header');
    let extra = pick(headerCases)();
    const hostOverride = extra.find(([k]) => k === 'Host');
    // Auth cases replace the route's own key.
    if (extra.some(([k]) => /^(authorization|x-api-key)$/i.test(k)))
      spec.headers = spec.headers!.filter(([k]) => !/^(authorization|x-api-key)$/i.test(k));
    if (
      extra.some(([k]) => /^content-length$/i.test(k)) ||
      extra.some(([k]) => /^transfer-encoding$/i.test(k))
    ) {
      // A body framing header of our own: the body goes as it is (chunked needs its encoding).
      if (extra.some(([k, v]) => /^transfer-encoding$/i.test(k) && v === 'chunked, gzip'))
        spec.body = '0\r\n\r\n';
      else spec.body = undefined;
    }
    if (hostOverride) {
      spec.headers = spec.headers!.filter(([k]) => k !== 'Host');
      extra = extra.filter(([k]) => k !== 'Host');
      spec.raw = Buffer.from(
        `${spec.method} ${spec.path} HTTP/1.1\r\nHost: ${hostOverride[1]}\r\nConnection: close\r\n${spec.headers!.map(([k, v]) => `${k}: ${v}\r\n`).join('')}` +
          `${spec.body ? `Content-Length: ${Buffer.byteLength(spec.body)}\r\n` : ''}\r\n${spec.body ?? ''}`,
        'latin1',
      );
    }
    spec.headers = [...spec.headers!, ...extra];
    return spec;
  },
  method: (world, route) => {
    const methods = [
      'HEAD',
      'OPTIONS',
      'TRACE',
      'PROPFIND',
      'PATCH',
      'PUT',
      'DELETE',
      'POST',
      'GET',
      'SEARCH',
      'QUERY',
      'LINK',
      'PURGE',
      'M-SEARCH',
      'BREW',
      'get',
      'FOO',
    ];
    const spec = base(world, route, 'method', { method: pick(methods) });
    if (random() < 0.3)
      spec.headers!.push(
        ['Origin', 'http://example.com'],
        ['Access-Control-Request-Method', pick(['POST', 'DELETE', 'X'])],
      );
    if (spec.method === 'HEAD' || spec.method === 'GET') spec.body = random() < 0.5 ? undefined : spec.body;
    // A standard method the path does not take is a 405 (docs/qa-api.md), whatever else the request holds.
    const allowed = METHODS_OF.get(`${route.service} ${route.template}`);
    if (allowed && STANDARD_METHODS.includes(spec.method) && !allowed.has(spec.method)) spec.expect = [405];
    return spec;
  },
  cursor: (world, route) => {
    if (!route.params.some((p) => p.name === 'cursor')) return undefined;
    const real = world.cursors[route.template] ?? world.cursors['/api/questions']!;
    const decoded = Buffer.from(real, 'base64url').toString('utf8');
    const b64 = (s: string) => Buffer.from(s).toString('base64url');
    let payload: Json = {};
    try {
      payload = JSON.parse(decoded) as Json;
    } catch {
      // keep {}
    }
    const keyVariants: unknown[] = [
      ['garbage', 1],
      [1, 1],
      ['', 0],
      ['1', '1'],
      [null, null],
      [],
      [1],
      [1, 2, 3],
      [{}, 1],
      [[1], 1],
      ['2024-01-01', -5],
      ['\u0000', 1],
      ['\ud800', 1],
      [1e308, 1],
      [-1, 2147483648],
      [9007199254740991, 9007199254740991],
      ['9'.repeat(500), 1],
      ['infinity', 1],
      ['-infinity', 1],
      ['NaN', 1],
      ['2024-13-45T99:99:99Z', 1],
      ['epoch', 1],
      ['now', 1],
      ['x'.repeat(3000), 1],
      ["' OR 1=1 --", 1],
      ['0001-01-01 BC', 1],
      ['294277-01-01', 1],
      [true, 1],
      [1.5, 1],
      [-0, 1],
    ];
    const cursors = [
      () => real.slice(0, -1),
      () => real.slice(0, -2),
      () => `${real}A`,
      () => `${real}=`,
      () => real.split('').reverse().join(''),
      () => real.replace(/[A-Z]/, 'a'),
      () => '',
      () => 'A',
      () => '%00',
      () => 'a'.repeat(4096),
      () => 'a'.repeat(4097),
      () => 'a'.repeat(100_000),
      () => b64('null'),
      () => b64('[]'),
      () => b64('"x"'),
      () => b64('{}'),
      () => b64('{"v":1}'),
      () => '====',
      () => '+/+/',
      () => '%2B%2F',
      () => b64(JSON.stringify({ ...payload, k: pick(keyVariants) })),
      () =>
        b64(
          JSON.stringify({
            ...payload,
            p: pick([0, -1, 1.5, 1e300, 2 ** 53, '2', null, 1000001, 2147483648]),
          }),
        ),
      () => b64(JSON.stringify({ ...payload, v: pick([0, 2, '1', null]) })),
      () => b64(JSON.stringify({ ...payload, l: pick(['', 'x', null, 1, '["questions"]']) })),
      () => b64(JSON.stringify({ ...payload, __proto__: { v: 1 } })),
      () => b64(decoded + 'x'),
      () => b64(`${decoded.slice(0, -1)},"v":1}`),
      () => `${real}&cursor=${real}`,
      () => `${real}&page=2`,
      () => `${real}&page=0`,
      () => `${real}&sort=votes`,
      () => `${real}&limit=100`,
    ];
    const cursor = pick(cursors)();
    return base(world, route, 'cursor', { path: `${fillPath(world, route)}?cursor=${cursor}` });
  },
  // Compressed bodies: bombs past the body limit once inflated, encodings that do not match the bytes.
  encoding: (world, route) => {
    if (!hasBody(route)) return undefined;
    const json = Buffer.from(JSON.stringify(goodBody(route)));
    const upload = route.template === '/lists' && random() < 0.5;
    const plain = upload ? Buffer.from('email\na@example.com\n') : json;
    const cases: [string, Buffer][] = [
      ['gzip', BOMB],
      ['deflate', BOMB_DEFLATE],
      ['gzip, gzip', gzipSync(gzipSync(plain))],
      ['gzip', gzipSync(gzipSync(plain))],
      ['deflate', gzipSync(plain)],
      ['gzip', deflateSync(plain)],
      ['gzip', gzipSync(plain).subarray(0, -6)],
      ['gzip', Buffer.concat([gzipSync(plain), Buffer.from('trailing garbage')])],
      ['gzip', Buffer.concat([gzipSync(plain), gzipSync(plain)])],
      ['gzip', gzipSync(Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]))],
      ['gzip', Buffer.alloc(0)],
      ['gzip', gzipSync(Buffer.alloc(0))],
      ['x-gzip', gzipSync(plain)],
      ['GZIP', gzipSync(plain)],
      ['zstd', plain],
      ['compress', plain],
      ['br', gzipSync(plain)],
      ['identity, gzip', gzipSync(plain)],
      ['', plain],
    ];
    const [encoding, body] = pick(cases);
    const spec = base(world, route, 'encoding', { body });
    spec.headers = [
      ...spec.headers!.filter(([k]) => !/^content-type$/i.test(k)),
      ['Content-Type', upload ? pick(['text/csv', 'text/plain']) : 'application/json'],
      ['Content-Encoding', encoding],
    ];
    return spec;
  },
  // The list uploads (POST /lists): malformed CSV and text, sent with Content-Length or chunked.
  upload: (world, route) => {
    if (route.template !== '/lists' || route.method !== 'POST') return undefined;
    const bodies: (() => string | Buffer)[] = [
      () => '',
      () => '\uFEFF',
      () => '\uFEFF\uFEFF',
      () => '"',
      () => 'email\n"a@example.com\n',
      () => 'email\na@example.com"x"\n',
      () => 'email\n"a@example.com"x\n',
      () => 'email,"name\na@example.com,b\n',
      () => `email\n${'"'.repeat(1001)}\n`,
      () => `${Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(',')}\na@example.com\n`,
      () => `email\n${Array.from({ length: 100_000 }, () => 'a@example.com').join(',')}\n`,
      () => `email\n${'a'.repeat(10 * 1024 * 1024)}\n`,
      () => `email\n"${'a'.repeat(10 * 1024 * 1024)}"\n`,
      () => 'a'.repeat(10 * 1024 * 1024),
      () => '\r\r\r',
      () => '\n\r\n\r',
      () => ',,,\n,,,\n',
      () => 'email\na@example.com\u0000\n',
      () => 'email\n\u202ea@example.com\u202c\n',
      () => 'email\na@example.com\r\nb@example.com\rc@example.com\n',
      () => Buffer.from('email\na@\xff\xfe.com\n\xc0\xaf@x.com\n\xed\xa0\x80@x.com\n', 'latin1'),
      () => Buffer.from([0xfe, 0xff, 0, 0x61]),
      () => 'email;name\na@example.com;x\n',
      () => '\t\n \n',
      () => 'email\n' + Array.from({ length: 5000 }, (_, i) => `u${i}@example.com`).join('\n'),
    ];
    const type = pick(['text/csv', 'text/plain', 'text/csv; charset=utf-8', 'text/plain; charset=latin1']);
    const query = pick([
      '',
      '?email_column=1',
      '?email_column=0',
      '?email_column=100001',
      '?email_column=email',
      '?email_column=%00',
      '?email_column=%ED%A0%80',
      '?email_column=-1',
      '?email_column=1e3',
      '?name=%00&max_age=-1',
    ]);
    const body = pick(bodies)();
    const spec = base(world, route, 'upload', { path: `${route.template}${query}`, body });
    spec.headers = [...spec.headers!.filter(([k]) => !/^content-type$/i.test(k)), ['Content-Type', type]];
    if (random() < 0.3) {
      // Chunked, in pieces that split multi-byte characters and CRLFs.
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
      const pieces: Buffer[] = [];
      for (let at = 0; at < bytes.length;) {
        const size = 1 + Math.floor(random() * Math.min(bytes.length - at, 70_000));
        const piece = bytes.subarray(at, at + size);
        pieces.push(Buffer.from(`${size.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
        at += size;
      }
      pieces.push(Buffer.from('0\r\n\r\n'));
      spec.body = Buffer.concat(pieces);
      spec.headers.push(['Transfer-Encoding', 'chunked']);
    }
    return spec;
  },
  // The list result downloads: formats, Accept, Range and conditional headers.
  download: (world, route) => {
    if (!/^\/lists\/\{id\}\/results/.test(route.template) || route.method !== 'GET') return undefined;
    const format = pick(['csv', 'ndjson', 'json', 'CSV', 'xml', '', 'csv&format=ndjson', '%00', 'csv%00']);
    const headers: [string, string][] = [];
    if (random() < 0.6)
      headers.push([
        'Accept',
        pick([
          'text/csv',
          'application/x-ndjson',
          'application/json',
          'application/xml',
          'text/csv;q=0',
          '*/*;q=0',
          'text/*',
          'text/csv, application/x-ndjson;q=0.9',
          'application/x-ndjson; charset=latin1',
          ';',
          'a'.repeat(8000),
        ]),
      ]);
    if (random() < 0.3)
      headers.push(['Range', pick(['bytes=0-10', 'bytes=-5', 'bytes=10-1', 'rows=1-2', 'bytes=0-0,5-9'])]);
    if (random() < 0.3)
      headers.push([
        pick(['If-None-Match', 'If-Match', 'If-Range', 'If-Modified-Since', 'If-Unmodified-Since']),
        pick([
          '*',
          'garbage',
          '"x"',
          'W/"x", "y"',
          Array.from({ length: 300 }, (_, i) => `"e${i}"`).join(','),
        ]),
      ]);
    const query = [
      format === '' ? '' : `format=${format}`,
      random() < 0.3 ? pick(['limit=1&page=2', 'status=valid,bogus', 'page=0', 'limit=1001']) : '',
    ]
      .filter(Boolean)
      .join('&');
    return base(world, route, 'download', {
      method: random() < 0.2 ? 'HEAD' : 'GET',
      path: `${fillPath(world, route, () => world.keptListId)}${query ? `?${query}` : ''}`,
      headers,
    });
  },
  'raw-wire': (world, route) => {
    const path = fillPath(world, route);
    const host = 'Host: localhost\r\n';
    const cases = [
      `${route.method} ${path} HTTP/1.0\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n\r\n`,
      `${route.method} ${path}\r\n\r\n`,
      `${route.method} ${path} HTTP/2.0\r\n${host}\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}X: \u0000\r\n\r\n`,
      `${route.method}  ${path} HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path} HTTP/1.1\n${host.replace('\r', '')}\n`,
      `${route.method} http://localhost${path} HTTP/1.1\r\n${host}\r\n`,
      `${route.method} * HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path}#x HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path} x HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path.replace('/', '/ ')} HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path}\u00e9 HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n2\r\n{}\r\n0\r\nX-Trailer: 1\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}${host}\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Bad Header: x\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host} folded\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Connection: keep-alive\r\n\r\n${route.method} ${path} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`,
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      `\r\n\r\n${route.method} ${path} HTTP/1.1\r\n${host}\r\n`,
      '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000',
      `CONNECT localhost:80 HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path}${'?a=1'.repeat(20_000)} HTTP/1.1\r\n${host}\r\n`,
      // Chunk sizes that overflow, are negative, carry extensions or do not match the data.
      ...['ffffffffffffffffff', '-2', '2;x=y', '2 ', ' 2', '0x2', '+2', '3'].map(
        (size) =>
          `${route.method} ${path} HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n${size}\r\n{}\r\n0\r\n\r\n`,
      ),
      `${route.method} ${path} HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n2\r\n{}0\r\n\r\n`,
      // 100-continue with the body sent without waiting for it.
      `${route.method} ${path} HTTP/1.1\r\n${host}Expect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
      `${route.method} ${path} HTTP/1.0\r\n${host}Connection: keep-alive\r\n\r\n${route.method} ${path} HTTP/1.0\r\n${host}\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}Connection: upgrade\r\n\r\n`,
      // Raw bytes that are not UTF-8 (and bidi controls) in the target and in header values.
      `${route.method} ${path}${path.includes('?') ? '&' : '?'}q=\xff\xc0\xaf\xe2\x80\xae HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path}\xed\xa0\x80 HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path} HTTP/1.1\r\n${host}X-Request-Id: \xff\xfe\r\nIf-None-Match: "\xc0\xaf"\r\nAccept: \xe2\x80\xae/*\r\n\r\n`,
      `${route.method} ${path}${path.includes('?') ? '&' : '?'}${'%'.repeat(3)} HTTP/1.1\r\n${host}\r\n`,
      `${route.method} ${path}${'/%00'} HTTP/1.1\r\n${host}\r\n`,
    ];
    const text = pick(cases);
    return {
      service: route.service,
      cls: 'raw-wire',
      method: route.method,
      path,
      raw: Buffer.from(text, 'latin1'),
    };
  },
};

// The admin panel, signed in: its pages, forms and the queue board's API (not in the OpenAPI documents).
const BOARD_JOB = 'fuzz-board-job';
const QUEUES = QUEUE_NAMES;
const ADMIN_ROUTES: {
  method: string;
  path: (v: () => string) => string;
  form?: Record<string, (v: () => string) => string>;
  json?: boolean;
}[] = [
  { method: 'GET', path: (v) => `/admin?x=${v()}` },
  { method: 'GET', path: (v) => `/admin/keys?page=${v()}` },
  { method: 'GET', path: (v) => `/admin/lists?page=${v()}&status=${v()}` },
  { method: 'GET', path: (v) => `/admin/newsletter?page=${v()}&q=${v()}&status=${v()}` },
  { method: 'GET', path: (v) => `/admin/webhooks?page=${v()}` },
  { method: 'GET', path: (v) => `/admin/settings?${v()}=${v()}` },
  {
    method: 'POST',
    path: () => '/admin/keys',
    form: {
      name: (v) => v(),
      plan: (v) => pick(['free', 'premium', v()]),
      scopes: (v) => pick(['qa:write', 'admin', v()]),
      username: (v) => pick(['fuzzer', v()]),
      create_user: (v) => pick(['1', '', v()]),
      _once: (v) => pick(['a'.repeat(20), v()]),
    },
  },
  // Never the fuzzer's own key (id 1, however written): the rest of the run needs it.
  {
    method: 'POST',
    path: (v) =>
      `/admin/keys/${pick([v(), '2147483648', '99999999999', '0', '-1', '1e3', '0x10', '9'.repeat(30)]).replace(/^0*1$/, '7')}/revoke`,
    form: {},
  },
  { method: 'POST', path: (v) => `/admin/lists/${v() || 'x'}/cancel`, form: {} },
  {
    method: 'POST',
    path: () => '/admin/settings',
    form: { _settings: (v) => pick(['ai_enabled', v()]), ai_enabled: (v) => pick(['on', '', v()]) },
  },
  {
    method: 'GET',
    path: (v) =>
      `/admin/queues/api/queues?activeQueue=${pick([...QUEUES, v()])}&status=${pick(['latest', 'failed', v()])}&page=${v()}&jobsPerPage=${v()}`,
  },
  { method: 'GET', path: (v) => `/admin/queues/api/queues/${pick([...QUEUES, v() || 'x'])}/${v() || '1'}` },
  {
    method: 'GET',
    path: (v) => `/admin/queues/api/queues/${pick([...QUEUES, v() || 'x'])}/${v() || '1'}/logs?page=${v()}`,
  },
  {
    method: 'GET',
    path: (v) =>
      `/admin/queues/api/queues/${pick([...QUEUES, v() || 'x'])}/${pick(['metrics', 'workers', 'rate-limit', 'default-job-options', 'job-data-schema'])}?${v()}=${v()}`,
  },
  {
    method: 'GET',
    path: (v) =>
      `/admin/queues/api/${pick(['metrics/history', 'metrics/latency', 'redis/stats', 'job-schedulers', 'metrics/history/usage'])}?${v()}=${v()}&queue=${v()}`,
  },
  {
    method: 'PUT',
    path: (v) =>
      `/admin/queues/api/queues/${pick([...QUEUES, v() || 'x'])}/${pick(['retry/failed', 'retry/' + v(), 'clean/' + v(), 'clean/completed', 'pause', 'resume', 'promote', 'concurrency', 'rate-limit'])}`,
    json: true,
  },
  {
    method: 'PUT',
    path: (v) =>
      `/admin/queues/api/queues/${pick([...QUEUES, v() || 'x'])}/${v() || '1'}/${pick(['retry', 'clean', 'promote'])}`,
    json: true,
  },
  {
    method: 'PATCH',
    path: (v) =>
      `/admin/queues/api/queues/${pick([...QUEUES, v() || 'x'])}/${v() || '1'}/${pick(['update-data', 'delay', 'priority'])}`,
    json: true,
  },
  { method: 'POST', path: (v) => `/admin/queues/api/queues/${pick(['ping', v() || 'x'])}/add`, json: true },
  // A real job (added at start on the ping queue, which its worker consumes at once) and job options.
  {
    method: 'PUT',
    path: () => `/admin/queues/api/queues/ping/${BOARD_JOB}/${pick(['retry', 'clean', 'promote'])}`,
    json: true,
  },
  {
    method: 'PATCH',
    path: () => `/admin/queues/api/queues/ping/${BOARD_JOB}/${pick(['update-data', 'delay', 'priority'])}`,
    json: true,
  },
  {
    method: 'GET',
    path: (v) =>
      `/admin/queues/api/queues/ping/${BOARD_JOB}/${pick(['logs', 'flow'])}?page=${v()}&depth=${v()}&maxChildren=${v()}`,
  },
  { method: 'PUT', path: () => `/admin/queues/api/queues/${pick(['pause', 'resume'])}`, json: true },
];

function adminSpec(world: World): Spec {
  const route = pick(ADMIN_ROUTES);
  const v = () => pick(ALL_WIRE);
  const spec: Spec = {
    service: 'qa',
    cls: 'admin',
    method: route.method,
    path: route.path(v),
    loose: !route.path(v).startsWith('/admin/queues/api'),
  };
  spec.headers = [
    ['Cookie', world.admin.cookie],
    ['Origin', world.admin.origin],
  ];
  if (route.form) {
    const fields = Object.entries(route.form).map(([k, f]) => `${k}=${f(v)}`);
    if (random() < 0.9) fields.push(`_csrf=${encodeURIComponent(world.admin.csrf)}`);
    if (random() < 0.2) fields.push(`${pick(Object.keys(route.form).concat('_csrf'))}=${v()}`);
    spec.headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
    spec.body = fields.join('&');
  } else if (route.json) {
    spec.headers.push(['Content-Type', 'application/json'], ['X-CSRF-Token', world.admin.csrf]);
    const key = pick([
      'data',
      'delay',
      'priority',
      'concurrency',
      'max',
      'duration',
      'name',
      'options',
      'jobId',
      'queueNames',
      'runAt',
      'jobData',
      'x',
    ]);
    const option = pick([
      'jobId',
      'priority',
      'delay',
      'attempts',
      'backoff',
      'repeat',
      'removeOnComplete',
      'deduplication',
      'debounce',
      'parent',
      'lifo',
      'timestamp',
    ]);
    spec.body =
      spec.path.endsWith('/add') && random() < 0.6
        ? `{"name":"fuzz","data":{},"options":{${JSON.stringify(option)}:${jsonValue()}}}`
        : `{${JSON.stringify(key)}:${jsonValue()}}`;
  }
  return spec;
}

// ---------------------------------------------------------------------------------------------------------------
// Checks

interface Finding {
  kind: string;
  cls: string;
  request: string;
  detail: string;
}
const findings: Finding[] = [];
let aiDeadlines = 0;
const counts = new Map<string, number>();
const statuses = new Map<string, Map<number, number>>();

function describeRequest(spec: Spec): string {
  const bytes = spec.raw ?? Buffer.from(`${spec.method} ${spec.path}`);
  const text = bytes
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const headers = (spec.headers ?? [])
    .filter(([k]) => !/^(authorization|x-api-key)$/i.test(k))
    .map(([k, v]) => `${k}: ${v.slice(0, 60)}`);
  const body =
    spec.body === undefined
      ? ''
      : ` body=${(Buffer.isBuffer(spec.body) ? spec.body.toString('latin1') : spec.body).slice(0, 120)}`;
  return `${spec.service} ${text.slice(0, 200)} ${headers.join(' | ').slice(0, 200)}${body}`;
}

function check(spec: Spec, answer: Answer): void {
  const record = (kind: string, detail: string): void =>
    void findings.push({ kind, cls: spec.cls, request: describeRequest(spec), detail });
  if (answer.timedOut)
    return record('hang', `no complete answer within ${answer.ms} ms (status ${answer.status ?? 'none'})`);
  if (answer.status === undefined) return record('reset', `connection ${answer.error} before an answer`);
  const byClass = statuses.get(spec.cls) ?? new Map<number, number>();
  statuses.set(spec.cls, byClass.set(answer.status, (byClass.get(answer.status) ?? 0) + 1));
  if (answer.error && answer.status >= 400)
    return record('reset', `${answer.error} after status ${answer.status}`);
  // POST /api/ai.php answers 503 when no worker finished the job by AI_DEADLINE_MS (docs/ai.md): the fuzzer's own
  // load on the AI workers, not the input. Counted apart.
  if (answer.status === 503 && /^\/api\/ai\.php/i.test(spec.path)) return void (aiDeadlines += 1);
  if (answer.status >= 500)
    return record('5xx', `${answer.status} ${answer.body.toString('utf8').slice(0, 200)}`);
  if (spec.expect && !spec.expect.includes(answer.status))
    record(
      'status',
      `${answer.status} where ${spec.expect.join(' or ')} is documented: ${answer.body.toString('utf8').slice(0, 120)}`,
    );
  if (
    answer.status < 400 ||
    spec.loose ||
    spec.method === 'HEAD' ||
    spec.raw?.toString('latin1').startsWith('HEAD')
  )
    return;
  if (answer.headers['content-encoding']) return;
  // The newsletter's confirm and unsubscribe links answer a person in a browser with a page (docs/newsletter.md).
  if (/^\/api\/newsletter\//.test(spec.path) && /^text\/html/.test(answer.headers['content-type'] ?? ''))
    return;
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return record(
      'error-body',
      `${answer.status} not JSON: ${JSON.stringify(answer.body.toString('utf8').slice(0, 150))}`,
    );
  }
  const keys = Object.keys(body as object)
    .sort()
    .join(',');
  const expected = spec.path.includes('newsletter')
    ? ['code,error,message,success', 'code,error,message']
    : ['code,error,message'];
  const b = body as { error?: unknown; code?: unknown; message?: unknown };
  if (
    !expected.includes(keys) ||
    b.error !== true ||
    b.code !== answer.status ||
    typeof b.message !== 'string'
  )
    record('error-body', `${answer.status} ${JSON.stringify(body).slice(0, 200)}`);
  // Messages quote at most 32 characters of the input (docs/qa-api.md): a long one echoes what was sent.
  else if (b.message!.toString().length >= 500)
    record('error-body', `${answer.status} message of ${String(b.message).length} characters`);
}

// ---------------------------------------------------------------------------------------------------------------
// The world: database, processes, key, ids

interface Child {
  name: string;
  process: ChildProcess;
}
const children: Child[] = [];
const logProblems: string[] = [];

function startChild(name: string, script: string, childArgs: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...childArgs], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const scan = (stream: 'stdout' | 'stderr') => {
    let rest = '';
    child[stream]!.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.trim()) continue;
        let level = 60;
        try {
          level = (JSON.parse(line) as { level?: number }).level ?? 60;
        } catch {
          // an unstructured line is a problem in itself
        }
        if (level >= 50) logProblems.push(`${name}: ${line.slice(0, 600)}`);
      }
    });
  };
  scan('stdout');
  scan('stderr');
  const entry = { name, process: child };
  child.on('exit', (code, signal) => {
    if (!stopping)
      findings.push({ kind: 'exit', cls: '-', request: name, detail: `exited with ${code ?? signal}` });
  });
  children.push(entry);
  return entry;
}
let stopping = false;

async function json(port: number, path: string, init: RequestInit = {}): Promise<Json> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  const body = (await res.json()) as Json;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

async function main(): Promise<void> {
  const database = args.database;
  if (!/^[a-z0-9_]+$/.test(database)) throw new Error('--database: lower-case letters, digits and _ only');
  const queuePrefix = `{fuzz-${process.pid}}`;
  console.error(
    `fuzz-http: seed ${args.seed}, ${args.rounds} rounds per route and class, database ${database} on ${ADMIN_URL}`,
  );
  const databaseUrl = await recreateDatabase(database);
  const env = {
    ...benchEnv(databaseUrl, queuePrefix),
    LOG_LEVEL: 'warn',
    NODE_ENV: args['node-env'],
    // --rate-limits on: the limiter runs (every request is charged) with budgets no fuzz run reaches.
    RATE_LIMIT_ENABLED: args['rate-limits'] === 'on' ? 'true' : 'false',
    ...Object.fromEntries(
      ['ANONYMOUS', 'AUTHENTICATED', 'PREMIUM'].flatMap((plan) => [
        [`RATE_LIMIT_${plan}_HOURLY`, '1000000000'],
        [`RATE_LIMIT_${plan}_DAILY`, '1000000000'],
      ]),
    ),
    VERIFY_RATE_LIMIT_HOURLY: '1000000000',
    VERIFY_RATE_LIMIT_DAILY: '1000000000',
    TRUST_PROXY: args['trust-proxy'],
    APP_SECRET: 'fuzz-secret-fuzz-secret-fuzz-secret-012345',
    ADMIN_TOKEN: 'fuzz-admin-token-fuzz-admin-token-0123',
    WORKER_METRICS_PORT: '0',
    VERIFY_ALLOW_PRIVATE_MX: 'false',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };
  await runScript('bin/migrate.ts', [], env, 'stderr');
  await runScript('bin/seed.ts', ['--questions', '150'], env, 'stderr');
  await runScript('bin/admin.ts', ['users', 'create', 'fuzzer'], env, 'stderr');
  const key = (
    await runScript(
      'bin/admin.ts',
      ['keys', 'create', '--user', 'fuzzer', '--plan', 'premium', '--scopes', 'qa:write,verify,admin'],
      env,
    )
  )
    .trim()
    .split('\n')
    .pop()!;
  await runScript('bin/admin.ts', ['settings', 'set', 'ai_enabled', 'true'], env, 'stderr').catch(
    () => undefined,
  );

  const qaPort = await freePort();
  const verifyPort = await freePort();
  const ports = { qa: qaPort, verify: verifyPort };
  startChild('qa', 'bin/start.ts', ['--role', 'qa'], { ...env, QA_PORT: String(qaPort) });
  startChild('verify', 'bin/start.ts', ['--role', 'verify'], { ...env, VERIFY_PORT: String(verifyPort) });
  startChild('workers', 'bin/workers.ts', [], env);
  await waitForHealth(`http://127.0.0.1:${qaPort}`, 120_000);
  await waitForHealth(`http://127.0.0.1:${verifyPort}`, 120_000);

  const qaDoc = await json(qaPort, '/api/openapi.json');
  const verifyDoc = await json(verifyPort, '/openapi.json');
  const routes = [...routesOf(qaDoc, 'qa'), ...routesOf(verifyDoc, 'verify')];
  for (const route of routes) {
    const key = `${route.service} ${route.template}`;
    const methods = METHODS_OF.get(key) ?? new Set<string>();
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
    METHODS_OF.set(key, methods);
  }

  // Real ids and cursors to start from.
  const writeHeaders = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const questions = (await json(qaPort, '/api/questions?limit=2')).data as Json;
  const question = (questions.questions as Json[])[0]!;
  const answers = (await json(qaPort, `/api/questions/${question.id}/answers`)).data as Json;
  const answerId = ((answers.answers as Json[] | undefined)?.[0]?.id as number | undefined) ?? 1;
  const tags = ((await json(qaPort, '/api/tags?limit=1')).data as Json).tags as Json[];
  const hook = (await json(qaPort, '/api/webhooks', {
    method: 'POST',
    headers: writeHeaders,
    body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['question.created'] }),
  }).catch(() => ({ data: { id: 1 } }))) as Json;
  const poll = (await json(qaPort, '/api/polls', {
    method: 'POST',
    headers: writeHeaders,
    body: JSON.stringify({ title: 'Which hop?', options: ['Citra', 'Mosaic'] }),
  }).catch(() => ({ data: { id: 1 } }))) as Json;
  const list = (await json(verifyPort, '/lists', {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ emails: ['a@example.com'] }),
  }).catch(() => ({ data: { id: '00000000-0000-0000-0000-000000000000' } }))) as Json;
  // The downloads' own list: DELETE /lists/{id} is fuzzed too and may remove the other one.
  const kept = (await json(verifyPort, '/lists', {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'text/csv' },
    body: 'email,name\na@example.com,=cmd\nb@example.org,"x, y"\n',
  }).catch(() => ({ data: { id: 'x' } }))) as Json;
  const mine = (await json(qaPort, '/api/questions', {
    method: 'POST',
    headers: writeHeaders,
    body: JSON.stringify({
      title: 'The fuzzer asks about lager fermentation',
      content: 'How long should a lager ferment at ten degrees, and why?',
      tags: [tags[0]!.name],
    }),
  })) as Json;
  const ownQuestionId = (mine.data as Json).id as number;
  const myAnswer = (await json(qaPort, `/api/questions/${question.id}/answers`, {
    method: 'POST',
    headers: writeHeaders,
    body: JSON.stringify({ content: 'Two to three weeks at ten degrees, then lager it cold for a month.' }),
  })) as Json;
  const ownAnswerId = (myAnswer.data as Json).id as number;
  const cursors: Record<string, string> = {};
  const userId = (((await json(qaPort, '/api/users?limit=1')).data as Json).users as Json[])[0]!.id as number;
  for (const route of routes.filter((r) => r.method === 'GET' && r.params.some((p) => p.name === 'cursor'))) {
    const world0 = {
      questionId: question.id,
      answerId,
      userId,
      tagSlug: tags[0]!.slug,
      webhookId: 1,
      pollId: 1,
      listId: 'x',
    } as unknown as World;
    const body = await json(ports[route.service], `${fillPath(world0, route)}?limit=1`).catch(
      () => undefined,
    );
    const found = JSON.stringify(body ?? {}).match(/"next_cursor":"([^"]+)"/);
    if (found) cursors[route.template] = found[1]!;
  }
  // Sign in to the admin panel as a browser does: the login form's CSRF token, then the session's.
  const cookies = new Map<string, string>();
  const take = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  };
  const jar = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const csrfOf = (html: string) => /name="_csrf"\s+value="([^"]+)"/.exec(html)?.[1] ?? '';
  const origin = `http://127.0.0.1:${qaPort}`;
  const loginPage = await fetch(`${origin}/admin/login`);
  take(loginPage);
  const login = await fetch(`${origin}/admin/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar(), origin },
    body: new URLSearchParams({ token: env.ADMIN_TOKEN, _csrf: csrfOf(await loginPage.text()) }).toString(),
  });
  take(login);
  if (login.status !== 303) throw new Error(`admin login answered ${login.status}`);
  const adminCsrf = csrfOf(await (await fetch(`${origin}/admin`, { headers: { cookie: jar() } })).text());

  await fetch(`${origin}/admin/queues/api/queues/ping/add`, {
    method: 'POST',
    headers: { cookie: jar(), origin, 'x-csrf-token': adminCsrf, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'fuzz', data: {}, options: { jobId: BOARD_JOB, delay: 3_600_000 } }),
  });

  const world: World = {
    key,
    questionId: question.id as number,
    answerId,
    ownQuestionId,
    ownAnswerId,
    userId,
    tagSlug: tags[0]!.slug as string,
    webhookId: ((hook.data as Json)?.id as number) ?? 1,
    pollId: ((poll.data as Json)?.id as number) ?? 1,
    listId: String(((list.data as Json)?.id as string) ?? 'x'),
    keptListId: String(((kept.data as Json)?.id as string) ?? 'x'),
    cursors,
    admin: { cookie: jar(), csrf: adminCsrf, origin },
  };

  // Routes outside the OpenAPI documents: probes, docs, the panel (answers in their own shapes: loose).
  const extras: Route[] = [
    ...[
      '/health',
      '/ready',
      '/metrics',
      '/api/docs',
      '/api/docs/json',
      '/api/openapi.json',
      '/admin',
      '/admin/login',
      '/admin/keys',
      '/admin/queues',
      '/',
    ].map((template) => ({
      service: 'qa' as const,
      method: 'GET',
      template,
      params: [],
      bodyTypes: [],
      bodyFields: [],
    })),
    ...['/health', '/ready', '/metrics', '/docs', '/openapi.json', '/'].map((template) => ({
      service: 'verify' as const,
      method: 'GET',
      template,
      params: [],
      bodyTypes: [],
      bodyFields: [],
    })),
    {
      service: 'qa',
      method: 'POST',
      template: '/admin/login',
      params: [],
      bodyTypes: ['application/x-www-form-urlencoded'],
      bodyFields: ['token'],
    },
  ];
  const loose = (template: string) =>
    /^\/(admin|api\/docs|docs|metrics|ready|health|$)/.test(template) || template === '/';

  // The well-formed request of every route first: a 4xx here means the fuzzer's base request needs fixing (shown),
  // since every class varies that request. Deletions last, so the webhook and the list exist for the others.
  for (const route of [...routes].sort(
    (a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'),
  )) {
    const spec = base(world, route, 'baseline');
    const answer = await send(ports[route.service], bytesOf(spec, 'localhost'));
    counts.set('baseline', (counts.get('baseline') ?? 0) + 1);
    check(spec, answer);
    if ((answer.status ?? 500) >= 400)
      console.error(
        `  baseline ${route.method} ${route.template}: ${answer.status} ${answer.body.toString('utf8').slice(0, 120)}`,
      );
  }

  const specs: Spec[] = [];
  for (const route of [...routes, ...extras])
    for (const [cls, generate] of Object.entries(GENERATORS))
      for (let i = 0; i < args.rounds * (SINGLE_ROUTE_CLASSES.includes(cls) ? 5 : 1); i++) {
        const spec = generate(world, route);
        if (!spec) break;
        if (loose(route.template)) spec.loose = true;
        specs.push(spec);
      }
  for (let i = 0; i < args.rounds * 40; i++) specs.push(adminSpec(world));
  // Shuffle so that one route's requests do not all land together.
  for (let i = specs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [specs[i], specs[j]] = [specs[j]!, specs[i]!];
  }

  console.error(
    `fuzz-http: ${routes.length + extras.length} routes, ${specs.length} requests, ${args.concurrency} at a time`,
  );
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (next < specs.length) {
        const spec = specs[next++]!;
        counts.set(spec.cls, (counts.get(spec.cls) ?? 0) + 1);
        const port = ports[spec.service];
        check(spec, await send(port, bytesOf(spec, `127.0.0.1:${port}`), timeoutFor(spec.path)));
        if (next % 2000 === 0) console.error(`  ${next} sent, ${findings.length} findings`);
      }
    }),
  );
  // Still alive and answering after all that?
  for (const [name, port] of Object.entries(ports)) {
    const answer = await send(
      port,
      Buffer.from(`GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    );
    if (answer.status !== 200)
      findings.push({
        kind: 'unhealthy',
        cls: '-',
        request: name,
        detail: `GET /health after the run: ${answer.status ?? answer.error}`,
      });
  }
  await new Promise((r) => setTimeout(r, 2000));

  stopping = true;
  await Promise.all(children.map((c) => stopChild(c.process)));
  await deleteKeys(queuePrefix).catch(() => undefined);

  // Report: per class, then findings grouped by kind and route shape.
  const seconds = (Date.now() - started) / 1000;
  console.log(`\nfuzz-http seed ${args.seed}: ${specs.length} requests in ${seconds.toFixed(1)} s`);
  console.log(`requests per class: ${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log('statuses per class:');
  for (const [cls, byClass] of statuses)
    console.log(
      `  ${cls}: ${[...byClass]
        .sort((a, b) => a[0] - b[0])
        .map(([k, v]) => `${k}×${v}`)
        .join(' ')}`,
    );
  const grouped = new Map<string, Finding[]>();
  for (const f of findings) {
    const groupKey = `${f.kind} ${f.cls} ${f.detail.slice(0, 60)}`;
    grouped.set(groupKey, [...(grouped.get(groupKey) ?? []), f]);
  }
  if (aiDeadlines) console.log(`POST /api/ai.php past its deadline (503, documented): ${aiDeadlines}`);
  console.log(`\nfindings: ${findings.length} (${grouped.size} kinds)`);
  for (const [k, list] of grouped) {
    console.log(`- ${k} ×${list.length}`);
    for (const f of list.slice(0, 3)) console.log(`    ${f.request}\n      → ${f.detail.slice(0, 300)}`);
  }
  const distinctLogs = [
    ...new Set(logProblems.map((l) => l.replace(/"(time|pid|reqId|hostname)":[^,]+,/g, ''))),
  ];
  console.log(`\nerror/fatal log lines: ${logProblems.length}`);
  for (const line of distinctLogs.slice(0, 30)) console.log(`  ${line}`);
  process.exitCode = findings.length || logProblems.length ? 1 : 0;
}

main().catch(async (err) => {
  console.error(err);
  stopping = true;
  await Promise.all(children.map((c) => stopChild(c.process)));
  process.exit(2);
});
