import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { claimChunk } from '../../shared/db/repositories/verification-lists.js';
import { LIST_CHUNK_ADDRESSES } from '../../shared/queues/verify-lists.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import { jsonList, type VerifyApp } from './helpers.js';

// The order chunks claim a list's addresses in (migration 0019): a domain's addresses stay together in blocks of a
// chunk's size, and a large domain's blocks are spread over the list rather than claimed one after the other, so
// that its MX host has work from the first chunks to the last while the other hosts work beside it. No worker runs
// here: the chunks are claimed directly, as the chunk jobs would.

describe('claim order of a list', () => {
  let runtime: TestRuntime;
  let app: VerifyApp;
  let key: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildVerifyApp(runtime);
    key = (await createKeys(runtime, { verify: ['verify'] })).verify!;
  });

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it("keeps a domain's addresses in whole blocks and spreads a large domain's blocks over the chunks", async () => {
    const large = Array.from({ length: 10 * LIST_CHUNK_ADDRESSES }, (_, i) => `u${i}@large.test`);
    const small = Array.from({ length: 40 }, (_, d) =>
      Array.from({ length: 25 }, (_, i) => `u${i}@small${d}.test`),
    ).flat();
    const created = await jsonList(app, key, { emails: [...large, ...small] });
    expect(created.statusCode, created.body).toBe(202);
    const { id } = created.json().data;

    const chunks: { address: string }[][] = [];
    for (let chunk = 0; ; chunk++) {
      const claimed = await runtime.database.db.transaction((tx) =>
        claimChunk(tx, id, chunk, LIST_CHUNK_ADDRESSES),
      );
      if (claimed.length === 0) break;
      chunks.push(claimed);
    }
    expect(chunks).toHaveLength(20);
    expect(new Set(chunks.flat().map((c) => c.address)).size).toBe(2000);

    const domainOf = (address: string) => address.slice(address.indexOf('@') + 1);
    // Whole blocks: each small domain (25 addresses, under a block) is claimed by one chunk.
    const chunkOfSmall = new Map<string, Set<number>>();
    chunks.forEach((claimed, k) => {
      for (const { address } of claimed) {
        const domain = domainOf(address);
        if (domain !== 'large.test') chunkOfSmall.set(domain, (chunkOfSmall.get(domain) ?? new Set()).add(k));
      }
    });
    expect([...chunkOfSmall.values()].every((k) => k.size === 1)).toBe(true);

    // Spread: the large domain's 10 blocks are not the first or the last 10 chunks in a row, and both halves of
    // the list's chunks hold some of it (in domain order, chunks 0–9 were all of it).
    const withLarge = chunks
      .map((claimed, k) => (claimed.some((c) => domainOf(c.address) === 'large.test') ? k : -1))
      .filter((k) => k >= 0);
    expect(withLarge.some((k) => k < 10)).toBe(true);
    expect(withLarge.some((k) => k >= 10)).toBe(true);
    const [blocks] = await runtime.database.query<{ n: number }>(
      sql`SELECT count(DISTINCT claim_order)::int AS n FROM verification_list_addresses
          WHERE list_id = ${id} AND domain = 'large.test'`,
    );
    expect(blocks!.n).toBe(10);
  });
});
