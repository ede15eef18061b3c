import { AsyncLocalStorage } from 'node:async_hooks';
import { rowsOf, type Database, type Db } from '../client.js';

/**
 * Which database a piece of asynchronous work reads from. Repositories are built once, on the Database's `db`, and
 * never choose: a request handler that may read from a replica runs inside `onReplica(replica.db, …)`, and every
 * statement it starts (whatever the repository, prepared statements included) goes there. Anything outside such a
 * scope — writes, workers, the read cache's LISTEN, advisory locks — uses the primary.
 */
const readTarget = new AsyncLocalStorage<Db>();

export const onReplica = <T>(db: Db, fn: () => T): T => readTarget.run(db, fn);

/** The primary Database, whose `db` and `query` follow the scope above. */
export function routedDatabase(primary: Database): Database {
  const db = new Proxy(primary.db, {
    get(target, property) {
      const current = readTarget.getStore() ?? target;
      const value: unknown = Reflect.get(current, property, current);
      // Methods (from the prototype) are bound to the database they read; functions the instance holds as data
      // (the driver's client: postgres.js's `sql` carries `unsafe`, used by prepared.ts) are handed out as they are,
      // because a bound copy would lose their properties.
      const isMethod = typeof value === 'function' && !Object.hasOwn(current, property);
      return isMethod ? (value as (...args: unknown[]) => unknown).bind(current) : value;
    },
  });
  return {
    ...primary,
    db,
    query: async (statement) =>
      rowsOf(await (db.execute(statement) as Promise<Parameters<typeof rowsOf>[0]>)),
  };
}
