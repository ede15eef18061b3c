import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../shared/db/client.js';

/**
 * The embedded database's socket (shared/db/embedded-server.ts) shares one PGlite session between its owner and
 * other processes' connections. Here the owner and a connection through its socket live in this process, which
 * makes the interleaving that a loaded machine produces now and then happen on every query.
 */
describe('the embedded database through its socket, beside a busy owner', { timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agora-socket-'));
  let owner: Database;
  let client: Database;

  beforeAll(async () => {
    owner = await openDatabase({ dataDir, embeddedRole: 'service' });
    // The directory is owned: a tool reaches the owner through its socket.
    client = await openDatabase({ dataDir, embeddedRole: 'tool' });
    expect(client.kind).toBe('postgres');
  });
  afterAll(async () => {
    await client?.close();
    await owner?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers each client's query with parameters with its own statement while the owner runs its own", async () => {
    // postgres.js sends such a query as Parse + Describe + Flush, then Bind + Execute + Sync: the owner's queries
    // must not slip in between and replace the client's unnamed statement.
    let busy = true;
    const ownerWork = (async () => {
      for (let i = 0; busy; i++) {
        await owner.query(sql`SELECT ${i}::int AS n`);
        // PGlite answers without a turn of the event loop: yield, or the socket is never read.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, k) =>
          client.query<{ sum: number; text: string }>(
            sql`SELECT ${k}::int + ${1000}::int AS sum, ${`q${k}`}::text AS text`,
          ),
        ),
      );
      expect(answers.map(([row]) => row)).toEqual(
        Array.from({ length: 100 }, (_, k) => ({ sum: k + 1000, text: `q${k}` })),
      );
    } finally {
      busy = false;
      await ownerWork;
    }
  });

  it('lets a new connection wait its turn behind a transaction that holds the session', async () => {
    const fresh = await openDatabase({ dataDir, embeddedRole: 'tool' });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const transaction = owner.db.transaction(async (tx) => {
        await tx.execute(sql`SELECT 1`);
        entered();
        await held;
      });
      await inside;
      // Two queries at once: the second opens a connection of its own, whose handshake waits for the session
      // longer than the 2 s connect timeout a PostgreSQL server gets; queued, not lost.
      const waiting = Promise.all([7, 8].map((n) => fresh.query<{ n: number }>(sql`SELECT ${n}::int AS n`)));
      setTimeout(release, 3000);
      await transaction;
      expect(await waiting).toEqual([[{ n: 7 }], [{ n: 8 }]]);
    } finally {
      await fresh.close();
    }
  });
});
