import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientTypes, TYPES_DIR } from '../../clients/typescript/generate.js';
import { createQaClient, createVerifyClient, type Question } from '../../clients/typescript/src/index.js';
import { openApiDocuments } from '../../services/openapi-documents.js';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addTag, addUser } from '../qa-read/fixtures.js';
import { createKeys } from '../verify-service/helpers.js';

describe('the typed TypeScript client (clients/typescript)', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  let qaUrl: string;
  let verifyUrl: string;
  let questionId: number;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    const db = runtime.database.db;
    const user = await addUser(db, { username: 'client_user' });
    const tag = await addTag(db, 'typed');
    questionId = (
      await addQuestion(db, { authorId: user.id, title: 'Typed clients for every API', tagIds: [tag.id] })
    ).id;
    await addQuestion(db, { authorId: user.id, title: 'A second question, with more votes', votes: 5 });
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
    qaUrl = await qa.listen({ host: '127.0.0.1', port: 0 });
    verifyUrl = await verify.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await qa.close();
    await verify.close();
    await runtime.close();
  });

  it('has committed types that match the documents the services serve (else: npm run client:generate)', async () => {
    const served = {
      qa: (await qa.inject('/api/openapi.json')).json(),
      verify: (await verify.inject('/openapi.json')).json(),
    };
    // What `npm run client:generate` reads is what the services serve.
    expect(await openApiDocuments(runtime)).toEqual(served);
    const generated = await clientTypes(served);
    for (const [name, contents] of Object.entries(generated)) {
      const committed = readFileSync(path.join(TYPES_DIR, name), 'utf8');
      expect(committed, `clients/typescript/src/${name} is stale: run npm run client:generate`).toBe(
        contents,
      );
    }
  });

  it("keeps the README's example identical to clients/typescript/example.ts, which the type check compiles", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /## Typed client[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    const example = readFileSync(path.join(TYPES_DIR, '..', 'example.ts'), 'utf8')
      .replace(/^\/\*\*.*\*\/\n/, '')
      .replace("from './src/index.js'", "from './clients/typescript/src/index.js'");
    expect(block).toBe(example);
  });

  it('reads the Q&A API with typed parameters and answers', async () => {
    const client = createQaClient({ baseUrl: qaUrl });
    const { data, error, response } = await client.GET('/api/questions', {
      params: { query: { sort: 'votes', limit: 10 } },
    });
    expect(error).toBeUndefined();
    expect(response.headers.get('etag')).toMatch(/^W\//);
    const questions: Question[] = data!.data.questions;
    expect(questions.map((q) => q.title)).toEqual([
      'A second question, with more votes',
      'Typed clients for every API',
    ]);
    expect(data!.data.pagination.total_items).toBe(2);

    const one = await client.GET('/api/questions/{id}', {
      params: { path: { id: String(questionId) }, query: { include: 'answers' } },
    });
    // The path also takes several ids (issue 19), so the type is a union: one id answers the question itself.
    const single = one.data!.data;
    if ('questions' in single) throw new Error('one id answers one question, not a vector');
    expect(single.tags).toEqual(['typed']);
    expect(single.answers).toEqual([]);

    const missing = await client.GET('/api/questions/{id}', { params: { path: { id: 'no-such-question' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ error: true, code: 404, message: 'Question not found' });

    // The enum is part of the type: a wrong value does not compile, and the service refuses it at run time too.
    // @ts-expect-error 'best' is not a sort order
    const bad = await client.GET('/api/questions', { params: { query: { sort: 'best' } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error!.message).toContain('unanswered');
  });

  it('calls the verification API with its key', async () => {
    const { verifier } = await createKeys(runtime, { verifier: ['verify'] });
    const client = createVerifyClient({ baseUrl: verifyUrl, apiKey: verifier! });
    const { data, error } = await client.POST('/verify', { body: { email: 'not an address' } });
    expect(error).toBeUndefined();
    expect(data!.data).toMatchObject({ status: 'invalid', syntax_valid: false });

    const anonymous = createVerifyClient({ baseUrl: verifyUrl, apiKey: 'agora_wrong' });
    const refused = await anonymous.POST('/verify', { body: { email: 'someone@example.org' } });
    expect(refused.response.status).toBe(401);
    expect(refused.error!.code).toBe(401);
  });
});
