import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedRows, type PlanChoice } from '../../shared/db/prepared.js';
import { onReplica, routedDatabase } from '../../shared/db/replicas/index.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

/**
 * Which database and which pool a prepared statement runs on through the read-replica router: inside an
 * `onReplica` scope every statement, the reusable-plan ones included, goes to the replica's own pools. (A second
 * database stands in for the replica; test/ops/read-replicas.test.ts runs a real one.)
 */
describe('prepared statements through the read-replica router', () => {
  let primary: TestRuntime;
  let replica: TestRuntime;

  beforeAll(async () => {
    [primary, replica] = await Promise.all([createTestRuntime(), createTestRuntime()]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([primary?.close(), replica?.close()]);
  });

  const where = (db: TestRuntime['database']['db'], plans: PlanChoice['plans']) =>
    preparedRows<{ database: string; plans: string }>(
      db,
      `SELECT current_database() AS database, current_setting('plan_cache_mode') AS plans`,
      [],
      { plans },
    ).then(([row]) => row);

  it('sends each statement to the scope’s database, on the pool its plans ask for', async () => {
    const routed = routedDatabase(primary.database).db;
    expect(await where(routed, 'per-call')).toEqual({
      database: primary.databaseName,
      plans: 'force_custom_plan',
    });
    expect(await where(routed, 'reusable')).toEqual({
      database: primary.databaseName,
      plans: 'force_generic_plan',
    });
    await onReplica(replica.database.db, async () => {
      expect(await where(routed, 'per-call')).toEqual({
        database: replica.databaseName,
        plans: 'force_custom_plan',
      });
      expect(await where(routed, 'reusable')).toEqual({
        database: replica.databaseName,
        plans: 'force_generic_plan',
      });
    });
  });

  it('gives the same values from both pools (dates as text, as drizzle reads them)', async () => {
    const read = (plans: PlanChoice['plans']) =>
      preparedRows<{ at: unknown; n: unknown }>(
        primary.database.db,
        `SELECT '2024-01-01 00:00:00+00'::timestamptz AS at, 2::bigint AS n`,
        [],
        { plans },
      );
    expect(await read('reusable')).toEqual(await read('per-call'));
    expect(await read('reusable')).toEqual([{ at: expect.any(String), n: 2 }]);
  });
});
