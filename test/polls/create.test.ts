import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { runProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { question, userWithKey } from './helpers.js';

type App = Awaited<ReturnType<typeof buildQaApp>>;

describe('polls: create, read, close', () => {
  let runtime: TestRuntime;
  let app: App;
  let alice: Awaited<ReturnType<typeof userWithKey>>;
  let bob: Awaited<ReturnType<typeof userWithKey>>;

  const create = (payload: Record<string, unknown>, headers: Record<string, string> = alice.auth) =>
    app.inject({ method: 'POST', url: '/api/polls', payload, headers });

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    alice = await userWithKey(runtime, 'alice');
    bob = await userWithKey(runtime, 'bob');
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('creates a poll attached to my question and reads it back', async () => {
    const questionId = await question(runtime, alice.id);
    const res = await create({
      title: ' Best  hop? ',
      options: ['Cascade', 'Citra'],
      question_id: questionId,
      allow_change: true,
    });
    expect(res.statusCode).toBe(201);
    const { poll } = res.json().data;
    expect(poll).toMatchObject({
      title: 'Best hop?',
      question_id: questionId,
      author_id: alice.id,
      allow_change: true,
      is_closed: false,
      closed_at: null,
      tallied_at: null,
      your_vote: null,
      results: {
        total_votes: 0,
        options: [
          { text: 'Cascade', votes: 0, percentage: 0 },
          { text: 'Citra', votes: 0, percentage: 0 },
        ],
      },
    });
    const read = await app.inject(`/api/polls/${poll.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().data.poll).toEqual(poll);
  });

  it('needs a key with qa:write', async () => {
    const anonymous = await app.inject({
      method: 'POST',
      url: '/api/polls',
      payload: { title: 'T', options: ['A', 'B'] },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ error: true, code: 401 });
    const verifyOnly = await userWithKey(runtime, 'carol', ['verify']);
    const res = await create({ title: 'T', options: ['A', 'B'] }, verifyOnly.auth);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: true, code: 403 });
  });

  it("refuses to attach a poll to someone else's question (403) or to no question (404)", async () => {
    const questionId = await question(runtime, alice.id);
    const byBob = await create({ title: 'T', options: ['A', 'B'], question_id: questionId }, bob.auth);
    expect(byBob.statusCode).toBe(403);
    const missing = await create({ title: 'T', options: ['A', 'B'], question_id: 2_000_000_000 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: true, code: 404 });
  });

  it.each([
    ['one option', { title: 'T', options: ['A'] }],
    ['21 options', { title: 'T', options: Array.from({ length: 21 }, (_, i) => `O${i}`) }],
    ['a blank option', { title: 'T', options: ['A', '   '] }],
    ['duplicate options', { title: 'T', options: ['Ale', ' ale'] }],
    ['no title', { options: ['A', 'B'] }],
    ['a deadline in the past', { title: 'T', options: ['A', 'B'], closes_at: '2001-01-01T00:00:00Z' }],
    ['a deadline that is not a date', { title: 'T', options: ['A', 'B'], closes_at: 'tomorrow' }],
  ])('answers 400 for %s', async (_name, payload) => {
    const res = await create(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: expect.any(String), code: 400 });
  });

  it('answers 404 for an unknown poll and 400 for a bad id', async () => {
    const unknown = await app.inject('/api/polls/2000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: true, code: 404 });
    expect((await app.inject('/api/polls/abc')).statusCode).toBe(400);
  });

  it('shows the caller their own vote', async () => {
    const created = (await create({ title: 'T', options: ['A', 'B'] })).json().data.poll;
    const optionId = created.results.options[1].id;
    await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      headers: bob.auth,
      payload: { poll_id: created.id, option_id: optionId },
    });
    const asBob = await app.inject({ url: `/api/polls/${created.id}`, headers: bob.auth });
    expect(asBob.json().data.poll.your_vote).toBe(optionId);
    const asAlice = await app.inject({ url: `/api/polls/${created.id}`, headers: alice.auth });
    expect(asAlice.json().data.poll.your_vote).toBeNull();
  });

  it('lets the author close the poll; later votes get 403', async () => {
    const created = (await create({ title: 'T', options: ['A', 'B'] })).json().data.poll;
    const byBob = await app.inject({
      method: 'POST',
      url: `/api/polls/${created.id}/close`,
      headers: bob.auth,
    });
    expect(byBob.statusCode).toBe(403);
    const closed = await app.inject({
      method: 'POST',
      url: `/api/polls/${created.id}/close`,
      headers: alice.auth,
    });
    expect(closed.statusCode).toBe(200);
    expect(closed.json().data.poll.is_closed).toBe(true);
    const vote = await app.inject({
      method: 'POST',
      url: '/api/poll-vote.php',
      payload: { poll_id: created.id, option_id: created.results.options[0].id },
    });
    expect(vote.statusCode).toBe(403);
  });

  it('documents the poll routes in the OpenAPI document', async () => {
    const res = await app.inject('/api/openapi.json');
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/poll-vote.php',
        '/api/polls',
        '/api/polls/{id}',
        '/api/polls/{id}/close',
      ]),
    );
  });

  it('creates a poll from the admin CLI, attached to any question', async () => {
    const questionId = await question(runtime, bob.id);
    const { code, stdout, output } = await runProcess(
      'bin/admin.ts',
      [
        'polls',
        'create',
        '--title',
        'Lager or ale?',
        '--options',
        'Lager, Ale ,Neither',
        '--question',
        String(questionId),
        '--allow-change',
        '--json',
      ],
      runtime.env,
    );
    expect(code, output).toBe(0);
    const printed = JSON.parse(stdout);
    expect(printed.options.map((o: { text: string }) => o.text)).toEqual(['Lager', 'Ale', 'Neither']);
    const read = (await app.inject(`/api/polls/${printed.id}`)).json().data.poll;
    expect(read).toMatchObject({
      title: 'Lager or ale?',
      question_id: questionId,
      allow_change: true,
      author_id: null,
    });
  }, 120_000);

  it('rejects a bad admin CLI call with a message and exit code 2', async () => {
    const { code, output } = await runProcess(
      'bin/admin.ts',
      ['polls', 'create', '--title', 'T', '--options', 'Only one'],
      runtime.env,
    );
    expect(code).toBe(2);
    expect(output).toMatch(/2 to 20 options/);
  }, 120_000);
});
