import { sql } from 'drizzle-orm';
import type { Logger } from '../../logger.js';
import { replicaLag, replicaUp } from '../../metrics.js';
import { openDatabase, type Database, type Db } from '../client.js';
import { parseLsn, PrimaryWalHistory } from './lag.js';

export interface Replica {
  /** host:port/database of its URL (never its credentials): logs, /ready and metrics name it so. */
  name: string;
  db: Db;
}

export interface ReplicaState {
  name: string;
  inUse: boolean;
  /** Lag behind the primary at the last check, when it answered. */
  lagMs?: number;
  /** Why it is left out. */
  reason?: string;
}

export interface ReadReplicas {
  /** A replica in use, taken in turn; undefined when none is. */
  pick(): Replica | undefined;
  /** Leaves a replica out after a failed read, until its next successful check. */
  leaveOut(replica: Replica, reason: string): void;
  states(): ReplicaState[];
  /**
   * How long a client that wrote reads from the primary: long enough for any replica in use to have replayed the
   * write (its lag was within the max at its last check, and checks are this far apart at most).
   */
  readYourWritesMs: number;
  close(): Promise<void>;
}

export interface ReadReplicaOptions {
  urls: string[];
  /** The primary's Database (not the routed one): its WAL position is what replicas are measured against. */
  primary: Database;
  maxLagMs: number;
  statementTimeoutMs: number;
  logger: Logger;
}

/** How often each replica (and the primary's WAL position) is checked, and how long a check may take. */
export const CHECK_EVERY_MS = 500;
export const CHECK_TIMEOUT_MS = 2000;

function replicaName(url: string): string {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

interface Member extends Replica {
  database: Database;
  state: ReplicaState;
  /** A check whose query has not settled yet (a replica that hangs): no second one is started meanwhile. */
  checking: boolean;
}

/**
 * The configured replicas and a background check of each: it answers within the check timeout, it is a standby
 * (pg_is_in_recovery()), and its replay is within the max lag of the primary's WAL (lag.ts). Replicas that fail
 * any of these are left out of `pick()` until a later check passes; with none in use reads go to the primary.
 */
export async function openReadReplicas(options: ReadReplicaOptions): Promise<ReadReplicas> {
  const { logger, maxLagMs } = options;
  const members: Member[] = [];
  for (const url of options.urls) {
    const database = await openDatabase({
      databaseUrl: url,
      dataDir: '',
      statementTimeoutMs: options.statementTimeoutMs,
    });
    const name = replicaName(url);
    members.push({
      name,
      db: database.db,
      database,
      state: { name, inUse: false, reason: 'not checked yet' },
      checking: false,
    });
  }
  const history = new PrimaryWalHistory(4 * maxLagMs + 10 * CHECK_EVERY_MS);

  const setState = (member: Member, next: ReplicaState) => {
    const was = member.state;
    member.state = next;
    replicaUp.set({ replica: member.name }, next.inUse ? 1 : 0);
    if (next.lagMs !== undefined) replicaLag.set({ replica: member.name }, next.lagMs / 1000);
    if (was.inUse && !next.inUse)
      logger.warn({ replica: member.name, reason: next.reason }, 'read replica left out');
    else if (!was.inUse && next.inUse)
      logger.info({ replica: member.name, lagMs: next.lagMs }, 'read replica in use');
  };

  async function checkMember(member: Member): Promise<void> {
    if (member.checking) return;
    member.checking = true;
    const query = member.database
      .query<{ standby: boolean; replayed: string | null }>(
        sql`SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed`,
      )
      .finally(() => {
        member.checking = false;
      });
    try {
      const [row] = await withTimeout(query, CHECK_TIMEOUT_MS);
      if (!row?.standby || !row.replayed) {
        setState(member, {
          name: member.name,
          inUse: false,
          reason: 'not a standby (pg_is_in_recovery() is false)',
        });
        return;
      }
      const lagMs = history.lagMs(parseLsn(row.replayed), Date.now());
      if (lagMs === undefined)
        setState(member, {
          name: member.name,
          inUse: false,
          reason: "the primary's WAL position is unknown",
        });
      else if (lagMs > maxLagMs)
        setState(member, {
          name: member.name,
          inUse: false,
          lagMs,
          reason: `lag ${lagMs} ms > ${maxLagMs} ms`,
        });
      else setState(member, { name: member.name, inUse: true, lagMs });
    } catch (err) {
      query.catch(() => {});
      setState(member, { name: member.name, inUse: false, reason: (err as Error).message });
    }
  }

  async function checkAll(): Promise<void> {
    try {
      const [row] = await withTimeout(
        options.primary.query<{ lsn: string }>(sql`SELECT pg_current_wal_lsn()::text AS lsn`),
        CHECK_TIMEOUT_MS,
      );
      if (row) history.record(parseLsn(row.lsn), Date.now());
    } catch {
      // The primary is away: replicas are measured against its last known position meanwhile.
    }
    await Promise.all(members.map(checkMember));
  }

  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = async () => {
    await checkAll();
    if (!closed) timer = setTimeout(() => void loop(), CHECK_EVERY_MS).unref();
  };
  await loop();
  logger.info(
    { replicas: members.map((member) => member.state), maxLagMs },
    'read replicas configured (reads go to the primary while none is in use)',
  );

  let turn = 0;
  return {
    pick() {
      const inUse = members.filter((member) => member.state.inUse);
      if (inUse.length === 0) return undefined;
      turn = (turn + 1) % inUse.length;
      return inUse[turn];
    },
    leaveOut(replica, reason) {
      const member = members.find((m) => m.name === replica.name);
      if (member?.state.inUse) setState(member, { ...member.state, inUse: false, reason });
    },
    states: () => members.map((member) => ({ ...member.state })),
    readYourWritesMs: maxLagMs + 2 * CHECK_EVERY_MS + CHECK_TIMEOUT_MS,
    async close() {
      closed = true;
      clearTimeout(timer);
      await Promise.all(members.map((member) => member.database.close()));
    },
  };
}
