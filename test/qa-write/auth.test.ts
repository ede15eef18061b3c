import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeysRepository } from '../../shared/db/repositories/api-keys.js';
import { ANSWER, COMMENT, questionBody, writeWorld, type Writer } from './helpers.js';

describe('who may write', () => {
  let world: Awaited<ReturnType<typeof writeWorld>>;
  let writer: Writer;
  let questionId: number;
  let answerId: number;
  let routes: Array<{ method: 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; payload?: object }>;

  beforeAll(async () => {
    world = await writeWorld();
    writer = await world.writer('writer');
    const asked = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      headers: writer.auth,
      payload: questionBody(),
    });
    questionId = asked.json().data.id;
    const answered = await world.app.inject({
      method: 'POST',
      url: `/api/questions/${questionId}/answers`,
      headers: writer.auth,
      payload: { content: ANSWER },
    });
    answerId = answered.json().data.id;
    routes = [
      { method: 'POST', url: '/api/questions', payload: questionBody() },
      {
        method: 'PATCH',
        url: `/api/questions/${questionId}`,
        payload: { title: 'A brand new title for this question' },
      },
      { method: 'POST', url: `/api/questions/${questionId}/answers`, payload: { content: ANSWER } },
      { method: 'PATCH', url: `/api/answers/${answerId}`, payload: { content: ANSWER } },
      { method: 'POST', url: `/api/questions/${questionId}/comments`, payload: { content: COMMENT } },
      { method: 'POST', url: `/api/answers/${answerId}/comments`, payload: { content: COMMENT } },
      { method: 'PUT', url: `/api/questions/${questionId}/vote`, payload: { value: 1 } },
      { method: 'DELETE', url: `/api/questions/${questionId}/vote` },
      { method: 'PUT', url: `/api/answers/${answerId}/vote`, payload: { value: -1 } },
      { method: 'DELETE', url: `/api/answers/${answerId}/vote` },
      { method: 'POST', url: `/api/answers/${answerId}/accept` },
      { method: 'DELETE', url: `/api/answers/${answerId}/accept` },
    ];
  });
  afterAll(() => world.close());

  const each = async (headers: Record<string, string>, status: number, message: string) => {
    for (const route of routes) {
      const res = await world.app.inject({
        ...route,
        headers,
        ...(route.payload ? { payload: route.payload } : {}),
      });
      expect({ route: `${route.method} ${route.url}`, status: res.statusCode, body: res.json() }).toEqual({
        route: `${route.method} ${route.url}`,
        status,
        body: { error: true, message, code: status },
      });
    }
  };

  it('401 without a key, even with an invalid body', async () => {
    await each({}, 401, 'Missing API key');
    const res = await world.app.inject({
      method: 'POST',
      url: '/api/questions',
      payload: { nonsense: true },
    });
    expect(res.statusCode).toBe(401);
  });

  it('401 for a malformed Authorization header or an unknown key', async () => {
    await each(
      { authorization: 'Basic dXNlcjpwYXNz' },
      401,
      'Authorization header must be "Bearer <API key>"',
    );
    await each({ authorization: `Bearer agora_${'a'.repeat(12)}_${'b'.repeat(43)}` }, 401, 'Invalid API key');
  });

  it('401 for a revoked key', async () => {
    const revoked = await world.writer('revoked');
    await apiKeysRepository(world.runtime.database.db).revoke(revoked.keyId);
    await each(revoked.auth, 401, 'API key has been revoked');
  });

  it('403 for a key without the qa:write scope', async () => {
    const verifier = await world.writer('verifier', ['verify']);
    await each(verifier.auth, 403, 'API key lacks the qa:write scope');
  });

  it('lets a key with the admin scope write as its user', async () => {
    const admin = await world.writer('boss', ['admin']);
    const res = await world.app.inject({
      method: 'POST',
      url: `/api/questions/${questionId}/comments`,
      headers: admin.auth,
      payload: { content: COMMENT },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.author).toEqual({ id: admin.id, username: 'boss' });
  });
});
