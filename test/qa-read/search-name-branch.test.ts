import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { couldBeName } from '../../shared/qa/name-query.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addUser } from './fixtures.js';

describe('search: the user-name branch of type=all runs only for text that could be a name', () => {
  let runtime: TestRuntime;
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false', QA_READ_CACHE_TTL_MS: '0' });
    app = await buildQaApp(runtime);
    const db = runtime.database.db;
    const user = await addUser(db, { username: 'lagerhead', displayName: 'Lager Head' });
    await addQuestion(db, { authorId: user.id, title: 'Lager head retention with wheat malt' });
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  const types = async (q: string, type = 'all') =>
    new Set(
      (
        (await app.inject(`/api/search?q=${encodeURIComponent(q)}&type=${type}`)).json().data.results as {
          type: string;
        }[]
      ).map((r) => r.type),
    );

  it.each([
    ['lager', true],
    ['Lager Head', true],
    ["O'Brien-Smith", true],
    ['Zoë', true],
    ['"lager head"', false],
    ['lager -wheat', false],
    ['lager or ale', false],
    ['lager head retention with wheat', false],
    ['x'.repeat(61), false],
  ])('couldBeName(%j) is %s', (q, expected) => {
    expect(couldBeName(q)).toBe(expected);
  });

  it('a name-like query finds the user with type=all; a phrase or a sentence does not run the branch', async () => {
    expect(await types('lager head')).toEqual(new Set(['question', 'user']));
    expect(await types('"lager head"')).toEqual(new Set(['question']));
    expect(await types('lager head retention with wheat')).toEqual(new Set(['question']));
    // type=users keeps searching names whatever the text
    expect(await types('"lager head"', 'users')).toEqual(new Set(['user']));
  });
});
