import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { BEER_DUMP_DIR } from '../../shared/datasets.js';
import { runProcess } from '../support/processes.js';
import { dumpRows } from '../support/dump-rows.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/** What post_links must hold after importing `dir`: one row per linked pair of questions, duplicate if any says so. */
function expectedLinks(dir: string): string[] {
  const questions = new Set(
    dumpRows(dir, 'Posts.xml')
      .filter((p) => p.PostTypeId === '1')
      .map((p) => p.Id),
  );
  const pairs = new Map<string, boolean>();
  for (const l of dumpRows(dir, 'PostLinks.xml')) {
    if (!['1', '3'].includes(l.LinkTypeId!) || l.PostId === l.RelatedPostId) continue;
    if (!questions.has(l.PostId!) || !questions.has(l.RelatedPostId!)) continue;
    const key = `${l.PostId}->${l.RelatedPostId}`;
    pairs.set(key, (pairs.get(key) ?? false) || l.LinkTypeId === '3');
  }
  return [...pairs].map(([key, duplicate]) => `${key}:${duplicate ? 'duplicate' : 'link'}`).sort();
}

describe('PostLinks.xml on import', () => {
  let runtime: TestRuntime;
  let other: string;

  const importedLinks = async () =>
    (
      await runtime.database.query<{ pair: string }>(sql`
        SELECT question_id || '->' || related_question_id || ':' || kind AS pair
        FROM post_links WHERE source = 'import'`)
    )
      .map((r) => r.pair)
      .sort();

  beforeAll(async () => {
    runtime = await createTestRuntime();
    // Another dump: only Posts.xml and PostLinks.xml, with a link to a missing post, a self link, a pair linked
    // twice (link and duplicate) and a link type we do not keep.
    other = mkdtempSync(path.join(tmpdir(), 'agora-dump-'));
    const question = (id: number, title: string) =>
      `<row Id="${id}" PostTypeId="1" CreationDate="2020-01-0${id}T00:00:00.000" Score="1" ViewCount="3" Body="&lt;p&gt;${title} body text&lt;/p&gt;" OwnerDisplayName="someone" Title="${title}" Tags="&lt;misc&gt;" AnswerCount="0" CommentCount="0" />`;
    writeFileSync(
      path.join(other, 'Posts.xml'),
      `<?xml version="1.0" encoding="utf-8"?>\n<posts>\n${question(1, 'First question here')}\n${question(2, 'Second question here')}\n${question(3, 'Third question here')}\n</posts>\n`,
    );
    writeFileSync(
      path.join(other, 'PostLinks.xml'),
      `<?xml version="1.0" encoding="utf-8"?>
<postlinks>
  <row Id="1" CreationDate="2020-02-01T00:00:00.000" PostId="2" RelatedPostId="1" LinkTypeId="1" />
  <row Id="2" CreationDate="2020-02-02T00:00:00.000" PostId="2" RelatedPostId="1" LinkTypeId="3" />
  <row Id="3" CreationDate="2020-02-03T00:00:00.000" PostId="3" RelatedPostId="1" LinkTypeId="1" />
  <row Id="4" CreationDate="2020-02-04T00:00:00.000" PostId="3" RelatedPostId="99" LinkTypeId="1" />
  <row Id="5" CreationDate="2020-02-05T00:00:00.000" PostId="3" RelatedPostId="3" LinkTypeId="1" />
  <row Id="6" CreationDate="2020-02-06T00:00:00.000" PostId="1" RelatedPostId="3" LinkTypeId="9" />
</postlinks>
`,
    );
  }, 60_000);
  afterAll(async () => {
    rmSync(other, { recursive: true, force: true });
    await runtime?.close();
  });

  it('loads the bundled dump: every link between two of its questions, duplicates marked, again in place', async () => {
    const run = await runProcess('bin/import-stackexchange.ts', [BEER_DUMP_DIR], runtime.env);
    expect(run.code, run.output).toBe(0);
    const expected = expectedLinks(BEER_DUMP_DIR);
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.some((l) => l.endsWith(':duplicate'))).toBe(true);
    expect(await importedLinks()).toEqual(expected);
    expect(run.stdout).toContain(`${expected.length} question links`);

    // Through the API: a duplicate pair shows on both questions.
    const [from, to] = expected
      .find((l) => l.endsWith(':duplicate'))!
      .split(':')[0]!
      .split('->');
    const app = await buildQaApp(runtime);
    try {
      const res = await app.inject(`/api/questions/${to}/linked?limit=100`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.questions).toContainEqual(
        expect.objectContaining({ id: Number(from), direction: 'incoming', is_duplicate: true }),
      );
      const back = await app.inject(`/api/questions/${from}/linked?limit=100`);
      expect(back.json().data.questions).toContainEqual(
        expect.objectContaining({ id: Number(to), direction: 'outgoing', is_duplicate: true }),
      );
    } finally {
      await app.close();
    }

    const again = await runProcess('bin/import-stackexchange.ts', [BEER_DUMP_DIR], runtime.env);
    expect(again.code, again.output).toBe(0);
    expect(await importedLinks()).toEqual(expected);
  }, 180_000);

  it('loads any other dump, skipping links to missing posts, self links and other link types', async () => {
    const run = await runProcess('bin/import-stackexchange.ts', ['--reset', other], runtime.env);
    expect(run.code, run.output).toBe(0);
    expect(await importedLinks()).toEqual(['2->1:duplicate', '3->1:link']);
    expect(expectedLinks(other)).toEqual(['2->1:duplicate', '3->1:link']);
    expect(run.stdout).toContain('2 links to missing questions');
  }, 120_000);
});
