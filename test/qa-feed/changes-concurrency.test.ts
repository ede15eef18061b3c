import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChanges } from '../../shared/changes/feed.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

// Writers whose transactions overlap and commit in another order than they started (each sleeps a random time
// between its write and its commit; some roll back), while a reader follows the feed with its cursor. A feed that
// numbered changes when they were written, not when they committed, would let the reader pass a number that
// commits later, and lose that change.

const WRITERS = 8;
const TRANSACTIONS = 12;

describe('the change feed under concurrent writers', () => {
  let runtime: TestRuntime;
  let author: number;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    const [user] = await runtime.database.query<{ id: number }>(
      sql`INSERT INTO users (username, display_name) VALUES ('writer', 'Writer') RETURNING id`,
    );
    author = user!.id;
  });
  afterAll(() => runtime?.close());

  it('hands every committed change to the reader once, in seq order, with no seq skipped', async () => {
    const committed = new Set<number>();
    let writing = true;

    const writer = async (w: number) => {
      for (let t = 0; t < TRANSACTIONS; t++) {
        const rollBack = (w + t) % 5 === 0;
        try {
          await runtime.database.db.transaction(async (tx) => {
            const result = await tx.execute(sql`
              INSERT INTO questions (title, slug, content, author_id)
              VALUES (${`q ${w}-${t}`}, ${`q-${w}-${t}`}, 'body', ${author}) RETURNING id`);
            const id = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows)[0] as {
              id: number;
            };
            await tx.execute(sql`SELECT pg_sleep(random() * 0.05)`);
            if (rollBack) throw new Error('rolled back on purpose');
            committed.add(id.id);
          });
        } catch (err) {
          if (!rollBack) throw err;
          // The id was added before the throw only when the transaction was meant to commit.
        }
      }
    };

    const seen: Array<{ seq: number; type: string; id: number }> = [];
    const reader = async () => {
      let cursor: string | undefined;
      for (;;) {
        const stillWriting = writing;
        const page = await readChanges(runtime.database, { since: cursor, limit: 7, types: 'question' });
        seen.push(...page.changes);
        cursor = page.next_cursor;
        if (!stillWriting && page.changes.length === 0) return;
      }
    };

    const readerDone = reader();
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    writing = false;
    await readerDone;

    const seqs = seen.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    // Every committed question once, and nothing else (no rolled-back one).
    expect(seen.map((c) => c.id).sort((a, b) => a - b)).toEqual([...committed].sort((a, b) => a - b));
    expect(committed.size).toBeGreaterThan(WRITERS * TRANSACTIONS * 0.7);

    // The seqs themselves have no holes: all changes of every type, from the first, are 1..n.
    const all = await runtime.database.query<{ seq: string }>(
      sql`SELECT seq::text FROM qa_changes ORDER BY qa_changes.seq`,
    );
    expect(all.map((r) => Number(r.seq))).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
  });
});
