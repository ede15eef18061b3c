import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addTag, addUser } from './fixtures.js';

/** Every parameter of every read route, fed values a careless or hostile client sends: never a 500. */
const HOSTILE = [
  '',
  ' ',
  '0',
  '-1',
  '1e3',
  '0x10',
  '2147483648',
  '9223372036854775808',
  '99999999999999999999999999',
  'NaN',
  'null',
  'true',
  "1' OR '1'='1",
  "'; DROP TABLE questions; --",
  '%',
  '%00',
  '_',
  '\\',
  '"',
  '<script>alert(1)</script>',
  'ünïcödé 🍺 発酵',
  '\u0000',
  'x'.repeat(450),
  '[]',
  '{}',
  'newest,votes',
];

const ROUTES: Record<string, string[]> = {
  '/api/questions': ['page', 'limit', 'sort', 'tag', 'category'],
  '/api/questions/1': ['include'],
  '/api/questions/1/answers': ['sort'],
  '/api/users': ['sort', 'page', 'limit'],
  '/api/tags': ['sort', 'page', 'limit'],
  '/api/search?q=beer&': ['type', 'page', 'limit', 'fromdate', 'todate', 'order'],
  '/api/search?': ['q'],
};

describe('hostile input on the read API', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const user = await addUser(runtime.database.db);
    const tag = await addTag(runtime.database.db, 'beer');
    await addQuestion(runtime.database.db, { authorId: user.id, title: 'Beer', tagIds: [tag.id] });
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  const check = async (url: string) => {
    const res = await app.inject(url);
    expect([200, 400, 404], `${url} -> ${res.statusCode} ${res.body.slice(0, 200)}`).toContain(
      res.statusCode,
    );
    const body = res.json();
    if (res.statusCode === 200) expect(body.success).toBe(true);
    else expect(body).toEqual({ error: true, message: expect.any(String), code: res.statusCode });
    return res.statusCode;
  };

  it.each(Object.entries(ROUTES))(
    '%s: every parameter, every hostile value, alone and repeated',
    async (route, params) => {
      const base = route.includes('?') ? route : `${route}?`;
      for (const param of params) {
        for (const value of HOSTILE) {
          await check(`${base}${param}=${encodeURIComponent(value)}`);
          expect(await check(`${base}${param}=1&${param}=${encodeURIComponent(value)}`)).toBe(400);
        }
      }
    },
  );

  it.each(HOSTILE.filter((v) => v !== ''))('path ids: %s', async (value) => {
    const key = encodeURIComponent(value);
    for (const url of [`/api/questions/${key}`, `/api/questions/${key}/answers`, `/api/users/${key}`]) {
      expect(await check(url)).not.toBe(200);
    }
  });

  it('a long unknown slug is a 404', async () => {
    expect(await check(`/api/questions/${'a'.repeat(500)}`)).toBe(404);
  });
});
