import fc from 'fast-check';
import type { FastifyInstance, InjectOptions, RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../../services/http/route-table.js';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createApiKey } from '../../shared/access/admin.js';
import { usersRepository } from '../../shared/db/repositories/users.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { contentType, hostileBodyText, hostileJson, hostileString } from './arbitraries.js';

/**
 * Property-based fuzzing of every route of both services, enumerated from the apps (services/http/route-table.ts),
 * so a new route is fuzzed without being listed here. For each route, requests are generated per parameter and
 * field of its schema (path, query, body), with wrong types, special numbers, NUL, lone surrogates, long and deep
 * values, broken JSON, odd content types and broken keys. Every answer must be below 500 and every error the
 * error body exactly. Reproduce a run with FUZZ_SEED=<the printed seed>; FUZZ_RUNS sets the runs per route.
 */

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

// The newsletter's endpoints add `success: false` to the error body (docs/newsletter.md); everything else is exact.
const errorKeys = (url: string) =>
  url.includes('newsletter') ? ['code', 'error', 'message', 'success'] : ['code', 'error', 'message'];

/** encodeURIComponent, except that a lone surrogate (which it refuses) is sent as its CESU-8 bytes. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...text]
      .map((c) => {
        try {
          return encodeURIComponent(c);
        } catch {
          const code = c.charCodeAt(0);
          return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            .map((b) => `%${b.toString(16).toUpperCase()}`)
            .join('');
        }
      })
      .join('');
  }
}

const propertiesOf = (schema: unknown): string[] =>
  schema && typeof schema === 'object' && 'properties' in schema
    ? Object.keys((schema as { properties: object }).properties)
    : [];

interface Target {
  app: FastifyInstance;
  route: RouteOptions;
  auth: fc.Arbitrary<Record<string, string>>;
}

function requestFor({ route, auth }: Target): fc.Arbitrary<InjectOptions> {
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as InjectOptions['method'];
  const params = (route.url.match(/:[A-Za-z_]+|\*/g) ?? []).length;
  const queryKeys = [...propertiesOf(schema.querystring), 'x'];
  const bodyKeys = [...propertiesOf(schema.body), '__proto__', 'extra'];
  const hasBody = method !== 'GET' && method !== 'HEAD';

  const path = fc.array(hostileString, { minLength: params, maxLength: params }).map((values) => {
    let i = 0;
    return route.url.replace(/:[A-Za-z_]+|\*/g, () => encode(values[i++] ?? '') || 'x');
  });
  const query = fc
    .array(fc.tuple(fc.constantFrom(...queryKeys), hostileString), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${encode(v)}`).join('&'));
  const fields = fc.dictionary(fc.constantFrom(...bodyKeys), hostileJson, { maxKeys: bodyKeys.length });
  const body = fc.oneof(
    fields.map((o) => ({ text: JSON.stringify(o), type: 'application/json' })),
    fields.map((o) => ({
      text: Object.entries(o)
        .map(([k, v]) => `${encode(k)}=${encode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`)
        .join('&'),
      type: 'application/x-www-form-urlencoded',
    })),
    fc.tuple(hostileBodyText, contentType).map(([text, type]) => ({ text, type })),
  );

  return fc.record({ path, query, body, auth }).map(({ path: p, query: q, body: b, auth: a }) => ({
    method,
    url: q ? `${p}?${q}` : p,
    headers: { ...a, ...(hasBody && b.type ? { 'content-type': b.type } : {}) },
    ...(hasBody ? { payload: b.text } : {}),
  }));
}

describe('fuzzing every route of both services', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  let targets: Target[];

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
    await Promise.all([qa.ready(), verify.ready()]);
    const db = runtime.database.db;
    await usersRepository(db).create({ username: 'fuzzer' });
    const scopes = ['qa:write', 'verify'] as const;
    const { key } = await createApiKey(db, { username: 'fuzzer', plan: 'premium', scopes: [...scopes] });
    const keys = (header: string, prefix: string) =>
      fc.constantFrom<Record<string, string>>(
        {},
        { [header]: `${prefix}${key}` },
        { [header]: `${prefix}${key}x` },
        { [header]: `${prefix}\u00ff\u00fe` },
        { [header]: prefix.trim() },
      );
    const of = (app: FastifyInstance, auth: fc.Arbitrary<Record<string, string>>) =>
      routeTable(app)
        .filter((r) => r.method !== 'HEAD' && !(Array.isArray(r.method) && r.method.includes('HEAD')))
        .map((route) => ({ app, route, auth }));
    targets = [
      ...of(qa as unknown as FastifyInstance, keys('authorization', 'Bearer ')),
      ...of(verify as unknown as FastifyInstance, keys('x-api-key', '')),
    ];
    console.log(`fuzz seed ${SEED} (FUZZ_SEED=${SEED} reproduces), ${targets.length} routes × ${RUNS} runs`);
  });
  afterAll(async () => {
    await qa.close();
    await verify.close();
    await runtime.close();
  });

  it('finds the routes of both apps', () => {
    const urls = targets.map((t) => `${String(t.route.method)} ${t.route.url}`);
    expect(urls).toEqual(
      expect.arrayContaining(['GET /api/questions', 'POST /api/poll-vote.php', 'POST /verify']),
    );
  });

  it('answers every generated request below 500, errors with the error body exactly', async () => {
    let cases = 0;
    for (const target of targets) {
      await fc.assert(
        fc.asyncProperty(requestFor(target), async (request) => {
          cases++;
          const res = await target.app.inject(request);
          const where = `${request.method} ${String(request.url).slice(0, 120)} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
          expect(res.statusCode, where).toBeLessThan(500);
          if (res.statusCode >= 400 && /json/.test(String(res.headers['content-type']))) {
            const body = res.json();
            expect(Object.keys(body).sort(), where).toEqual(errorKeys(target.route.url));
            expect(body.error, where).toBe(true);
            expect(body.code, where).toBe(res.statusCode);
            expect(typeof body.message, where).toBe('string');
            expect(body.message.length, where).toBeLessThan(500);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    }
    console.log(`fuzz: ${cases} requests over ${targets.length} routes (seed ${SEED})`);
  }, 120_000);
});
