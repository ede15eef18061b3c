import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEER_DUMP_DIR } from '../../shared/datasets.js';
import { seedDatabase } from '../../shared/demo/seed.js';
import { importStackExchange } from '../../shared/stackexchange/import.js';
import { dumpRows } from '../support/dump-rows.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

describe('badge awards from Badges.xml and the demo seed', () => {
  let runtime: TestRuntime;
  let other: string;

  const awards = async () =>
    runtime.database.query<{
      id: number;
      user_id: number;
      name: string;
      class: string;
      tag_based: boolean;
      post_id: number | null;
      awarded_at: string;
    }>(
      sql`SELECT id, user_id, name, class, tag_based, post_id,
                 to_char(awarded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS awarded_at
          FROM badge_awards ORDER BY id`,
    );
  /** Users whose badge counts differ from their awards (none when the two agree). */
  const mismatches = async () =>
    runtime.database.query<{ id: number }>(sql`
      SELECT u.id FROM users u LEFT JOIN badge_awards b ON b.user_id = u.id GROUP BY u.id
      HAVING (u.badge_gold, u.badge_silver, u.badge_bronze) IS DISTINCT FROM
             (count(b.id) FILTER (WHERE b.class = 'gold')::int, count(b.id) FILTER (WHERE b.class = 'silver')::int,
              count(b.id) FILTER (WHERE b.class = 'bronze')::int)`);

  beforeAll(async () => {
    runtime = await createTestRuntime();
    // Another dump, in the newer format: Class and TagBased attributes, one award for a user not in Users.xml,
    // one without a date, and a PostId (which some exports carry).
    other = mkdtempSync(path.join(tmpdir(), 'agora-badges-'));
    writeFileSync(
      path.join(other, 'Users.xml'),
      `<?xml version="1.0" encoding="utf-8"?>\n<users>
  <row Id="1" Reputation="10" CreationDate="2020-01-01T00:00:00.000" DisplayName="Ann" />
  <row Id="2" Reputation="10" CreationDate="2020-01-01T00:00:00.000" DisplayName="Ben" />
</users>\n`,
    );
    writeFileSync(
      path.join(other, 'Posts.xml'),
      `<?xml version="1.0" encoding="utf-8"?>\n<posts>
  <row Id="5" PostTypeId="1" CreationDate="2020-01-02T00:00:00.000" Score="1" ViewCount="3" Body="&lt;p&gt;Body text&lt;/p&gt;" OwnerUserId="1" Title="A question here" Tags="&lt;misc&gt;" AnswerCount="0" CommentCount="0" />
</posts>\n`,
    );
    writeFileSync(
      path.join(other, 'Badges.xml'),
      `<?xml version="1.0" encoding="utf-8"?>\n<badges>
  <row Id="10" UserId="1" Name="Great Question" Date="2020-02-01T00:00:00.000" Class="1" TagBased="False" PostId="5" />
  <row Id="11" UserId="1" Name="misc" Date="2020-02-02T00:00:00.000" Class="3" TagBased="True" />
  <row Id="12" UserId="2" Name="Custom Thing" Date="2020-02-03T00:00:00.000" Class="2" TagBased="False" />
  <row Id="13" UserId="9" Name="Student" Date="2020-02-04T00:00:00.000" Class="3" TagBased="False" />
  <row Id="14" UserId="2" Name="Student" Class="3" TagBased="False" />
</badges>\n`,
    );
  }, 60_000);
  afterAll(async () => {
    rmSync(other, { recursive: true, force: true });
    await runtime?.close();
  });

  it('imports every award of the bundled dump whose user is in it, counts in step, once on a re-import', async () => {
    const summary = await importStackExchange(runtime.database, BEER_DUMP_DIR);
    const users = new Set(dumpRows(BEER_DUMP_DIR, 'Users.xml').map((u) => u.Id));
    const expected = dumpRows(BEER_DUMP_DIR, 'Badges.xml').filter((b) => users.has(b.UserId!));
    expect(expected.length).toBeGreaterThan(100);
    const loaded = await awards();
    expect(loaded.map((a) => a.id)).toEqual(expected.map((b) => Number(b.Id)).sort((x, y) => x - y));
    const byId = new Map(loaded.map((a) => [a.id, a]));
    for (const b of expected) {
      expect(byId.get(Number(b.Id))).toMatchObject({
        user_id: Number(b.UserId),
        name: b.Name,
        awarded_at: b.Date!.slice(0, 23),
      });
    }
    // The beer dump has no Class attribute: the standard names say gold and silver, the rest is bronze.
    expect(byId.get(Number(expected.find((b) => b.Name === 'Autobiographer')!.Id))?.class).toBe('bronze');
    const classOf = (name: string) => byId.get(Number(expected.find((b) => b.Name === name)!.Id))?.class;
    expect([classOf('Fanatic'), classOf('Good Question'), classOf('Supporter')]).toEqual([
      'gold',
      'silver',
      'bronze',
    ]);
    expect(summary.badges).toEqual({
      awards: expected.length,
      skipped: dumpRows(BEER_DUMP_DIR, 'Badges.xml').length - expected.length,
    });
    expect(await mismatches()).toEqual([]);
    const [total] = await runtime.database.query<{ n: number }>(
      sql`SELECT sum(badge_gold + badge_silver + badge_bronze)::int AS n FROM users`,
    );
    expect(total!.n).toBe(expected.length);

    await importStackExchange(runtime.database, BEER_DUMP_DIR);
    expect((await awards()).length).toBe(expected.length);
    expect(await mismatches()).toEqual([]);
  }, 180_000);

  it('reads Class, TagBased and PostId of newer dumps; skips unknown users and undated rows', async () => {
    const summary = await importStackExchange(runtime.database, other, { reset: true });
    expect(await awards()).toEqual([
      {
        id: 10,
        user_id: 1,
        name: 'Great Question',
        class: 'gold',
        tag_based: false,
        post_id: 5,
        awarded_at: '2020-02-01T00:00:00.000',
      },
      {
        id: 11,
        user_id: 1,
        name: 'misc',
        class: 'bronze',
        tag_based: true,
        post_id: null,
        awarded_at: '2020-02-02T00:00:00.000',
      },
      {
        id: 12,
        user_id: 2,
        name: 'Custom Thing',
        class: 'silver',
        tag_based: false,
        post_id: null,
        awarded_at: '2020-02-03T00:00:00.000',
      },
    ]);
    expect(summary.badges).toEqual({ awards: 3, skipped: 2 });
    expect(await mismatches()).toEqual([]);
    const counts = await runtime.database.query<{ id: number; gold: number; silver: number; bronze: number }>(
      sql`SELECT id, badge_gold AS gold, badge_silver AS silver, badge_bronze AS bronze FROM users WHERE id IN (1, 2) ORDER BY id`,
    );
    expect(counts).toEqual([
      { id: 1, gold: 1, silver: 0, bronze: 1 },
      { id: 2, gold: 0, silver: 1, bronze: 0 },
    ]);
  }, 120_000);

  it('gives the demo seed one award per badge its users hold, the same on every run', async () => {
    await seedDatabase(runtime.database, { questions: 60, reset: true });
    const first = await awards();
    expect(first.length).toBeGreaterThan(0);
    expect(await mismatches()).toEqual([]);
    const [late] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM badge_awards b JOIN users u ON u.id = b.user_id WHERE b.awarded_at < u.created_at`,
    );
    expect(late!.n).toBe(0);
    await seedDatabase(runtime.database, { questions: 60, reset: true });
    expect(await awards()).toEqual(first);
  }, 180_000);
});
