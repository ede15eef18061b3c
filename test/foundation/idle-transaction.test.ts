import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

// A process that stops in the middle of a transaction (event loop blocked, SIGSTOP) still answers TCP keepalives
// from its kernel, so only PostgreSQL's idle_in_transaction_session_timeout frees the locks its session holds.

const LOCK = 0x1d1e7;
const lockIsFree = async (runtime: TestRuntime) => {
  const [row] = await runtime.database.query<{ taken: boolean }>(
    sql`SELECT pg_try_advisory_xact_lock(${LOCK}) AS taken`,
  );
  return row!.taken;
};

describe('a session left idle in a transaction', () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await createTestRuntime({ DATABASE_IDLE_TRANSACTION_TIMEOUT_MS: '500' });
  });
  afterAll(() => runtime?.close());

  it('is ended by the server after DATABASE_IDLE_TRANSACTION_TIMEOUT_MS, and its locks are free again', async () => {
    const transaction = runtime.database.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${LOCK})`);
      expect(await lockIsFree(runtime)).toBe(false);
      await sleep(3000); // idle inside the transaction, as a stopped process would be
    });
    // The transaction fails as soon as the server ends its session, while its client still sleeps in it.
    const failure = await transaction.then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(await lockIsFree(runtime)).toBe(true);
  });

  it('is a setting of every pooled session', async () => {
    const [row] = await runtime.database.query<{ setting: string }>(
      sql`SELECT current_setting('idle_in_transaction_session_timeout') AS setting`,
    );
    expect(row!.setting).toBe('500ms');
  });
});
