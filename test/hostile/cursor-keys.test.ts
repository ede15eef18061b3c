import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addUser } from '../qa-read/fixtures.js';
import { expectErrorBody } from './support.js';

// A cursor is base64url JSON that a client can take apart and forge. Its keys are checked as values PostgreSQL
// accepts before they reach it: a timestamp of the right shape that names no instant (month 13, year 0) and a text
// key holding NUL were 500s. And a route passes on only the parameters it declares.

describe('forged cursor keys and undeclared parameters', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;
  let authorId: number;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    const author = await addUser(db, { username: 'ann' });
    await addUser(db, { username: 'bob' });
    authorId = author.id;
    await addQuestion(db, { authorId });
    await addQuestion(db, { authorId });
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  /** The next_cursor of `url` (limit 1) with its first key replaced. */
  async function forged(url: string, key: unknown): Promise<string> {
    const res = await app.inject(`${url}&limit=1`);
    expect(res.statusCode, res.body).toBe(200);
    const cursor = res.json().data.pagination.next_cursor as string;
    const payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k: unknown[] };
    payload.k[0] = key;
    return Buffer.from(JSON.stringify(payload)).toString('base64url');
  }

  it.each(['2024-13-45T25:99:99.000000Z', '2024-02-30T00:00:00.000000Z', '0000-01-01T00:00:00.000000Z'])(
    'a timestamp key that names no instant (%s) is a 400',
    async (key) => {
      for (const url of ['/api/questions?sort=newest', '/api/users?sort=newest']) {
        const cursor = await forged(url, key);
        expectErrorBody(await app.inject(`${url}&limit=1&cursor=${cursor}`), 400);
      }
    },
  );

  it.each(['\u0000', 'a\u0000b', '\ud800'])(
    'a text key PostgreSQL cannot hold (%j) is a 400',
    async (key) => {
      for (const url of ['/api/users?sort=name', '/api/tags?sort=name']) {
        const res = await app.inject(`${url}&limit=1`);
        if (res.json().data.pagination.next_cursor === null) continue; // no second page to forge a cursor for
        const cursor = await forged(url, key);
        expectErrorBody(await app.inject(`${url}&limit=1&cursor=${cursor}`), 400);
      }
    },
  );

  it('ignores a parameter the route does not declare (category on a user’s questions)', async () => {
    for (const query of ['category=abc', 'category=1.5', 'category=1&category=2']) {
      const res = await app.inject(`/api/users/${authorId}/questions?${query}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.questions).toHaveLength(2);
    }
  });
});
