import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { decodeChangesCursor, readChanges } from '../../shared/changes/feed.js';
import { changesRepository } from '../../shared/db/repositories/changes.js';
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
  let app: Awaited<ReturnType<typeof buildQaApp>>;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildQaApp(runtime);
    const [user] = await runtime.database.query<{ id: number }>(
      sql`INSERT INTO users (username, display_name) VALUES ('writer', 'Writer') RETURNING id`,
    );
    author = user!.id;
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

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

    // The same walk through GET /changes, which is in the read cache: whatever page it is served (a cached one may
    // predate commits whose notifications are on their way), its next_cursor must never skip a change. It stops
    // once its cursor reaches the last seq committed after the writers finished.
    const seenOverHttp: Array<{ seq: number; type: string; id: number }> = [];
    const end: { lastSeq?: number } = {};
    const httpReader = async () => {
      let cursor: string | undefined;
      for (;;) {
        const res = await app.inject(
          `/api/changes?types=question&limit=7${cursor ? `&since=${cursor}` : ''}`,
        );
        expect(res.statusCode, res.body).toBe(200);
        const page = res.json().data as { changes: typeof seen; next_cursor: string; has_more: boolean };
        seenOverHttp.push(...page.changes);
        cursor = page.next_cursor;
        if (end.lastSeq !== undefined && decodeChangesCursor(cursor) >= end.lastSeq) return;
        // Caught up: poll again a little later, as a client does (a cache hit never leaves the event loop otherwise).
        if (!page.has_more) await sleep(5);
      }
    };

    const readersDone = Promise.all([reader(), httpReader()]);
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    writing = false;
    end.lastSeq = await changesRepository(runtime.database).lastSeq();
    await readersDone;
    expect(seenOverHttp).toEqual(seen);

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
