import { createHash } from 'node:crypto';
import { openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';

/**
 * One PGlite directory belongs to one process: two processes opening it corrupt it. The first process to open the
 * embedded database owns it and serves it to every other process of this machine (the README's `npm run seed` or
 * `npm run admin` while `npm start` runs) over a Unix socket that speaks the PostgreSQL wire protocol. The lock
 * file in the data directory says who owns it and where its socket is.
 *
 * PGlite runs one session, so the proxy keeps clients from interleaving inside it: a client's messages up to a
 * Sync or a simple Query run as one unit under PGlite's own transaction lock (which every in-process query also
 * takes), and while a client has a transaction open, nothing else runs until it commits, rolls back or leaves.
 */

export interface EmbeddedOwner {
  kind: 'service' | 'tool';
  pid: number;
  socket: string;
}

const LOCK_FILE = 'embedded-owner.json';
const SOCKET_FILE = 'pglite.sock';
// sun_path holds 108 bytes on Linux; a deep data directory gets its socket in the temp directory instead.
const MAX_SOCKET_PATH = 100;

const lockPath = (dataDir: string) => path.join(dataDir, LOCK_FILE);

function socketPathFor(dataDir: string): string {
  const inDir = path.join(path.resolve(dataDir), SOCKET_FILE);
  if (inDir.length <= MAX_SOCKET_PATH) return inDir;
  const digest = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `agora-pglite-${digest}.sock`);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The live owner of dataDir, or undefined when nobody holds it (a stale lock of a dead process is removed). */
export function readOwner(dataDir: string): EmbeddedOwner | 'starting' | undefined {
  let text: string;
  try {
    text = readFileSync(lockPath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  let owner: EmbeddedOwner | undefined;
  try {
    owner = JSON.parse(text) as EmbeddedOwner;
  } catch {
    // Caught between the claim and its first write.
    return 'starting';
  }
  if (alive(owner.pid)) return owner.socket ? owner : 'starting';
  rmSync(lockPath(dataDir), { force: true });
  return undefined;
}

/** Claims dataDir for this process; false when another process already holds the claim. */
export function claimOwnership(dataDir: string, kind: EmbeddedOwner['kind']): boolean {
  try {
    const fd = openSync(lockPath(dataDir), 'wx');
    try {
      writeFileSync(fd, JSON.stringify({ kind, pid: process.pid }));
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

export function releaseOwnership(dataDir: string): void {
  rmSync(lockPath(dataDir), { force: true });
}

/** Frontend messages after which the client waits for the server's answer: the end of one unit of work. */
const SYNC = 'S'.charCodeAt(0);
const FLUSH = 'H'.charCodeAt(0);
const UNIT_END = new Set([SYNC, 'Q'.charCodeAt(0), FLUSH]);
/**
 * A unit ending in Flush is the middle of an extended-protocol sequence: postgres.js sends Parse + Describe +
 * Flush for a query with parameters, reads the parameter types, then sends Bind + Execute + Sync. The unnamed
 * statement it parsed lives only until the next Parse, so the session stays with the client until its Sync;
 * another client's query in between would replace it ("unnamed prepared statement does not exist").
 */
const midSequence = (unit: Buffer[]) => unit[unit.length - 1]![0] === FLUSH;
const TERMINATE = 'X'.charCodeAt(0);
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const SYNC_MESSAGE = Buffer.from([SYNC, 0, 0, 0, 4]);
const ROLLBACK = (() => {
  const text = Buffer.from('ROLLBACK\0');
  const message = Buffer.alloc(5 + text.length);
  message[0] = 'Q'.charCodeAt(0);
  message.writeInt32BE(4 + text.length, 1);
  text.copy(message, 5);
  return message;
})();

/** PGlite's own locks: every in-process query, exec and transaction runs under both. */
interface PGliteLocks {
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
}

/** One client connection: splits the byte stream into units of work and hands them out in order. */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  private pending: Buffer[] = [];
  private units: (Buffer[] | null)[] = [];
  private waiter: ((unit: Buffer[] | null) => void) | undefined;

  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('close', () => this.push(null));
    socket.on('error', () => socket.destroy());
  }

  /** The next unit of work, or null once the client has gone. */
  next(): Promise<Buffer[] | null> {
    const unit = this.units.shift();
    if (unit !== undefined) return Promise.resolve(unit);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  private push(unit: Buffer[] | null): void {
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter(unit);
    } else this.units.push(unit);
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) return;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) return;
        const code = this.buffer.readInt32BE(4);
        const message = this.buffer.subarray(0, length);
        this.buffer = this.buffer.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) this.socket.write('N');
        else if (code === CANCEL_REQUEST) this.socket.destroy();
        else {
          this.started = true;
          this.push([Buffer.from(message)]);
        }
        continue;
      }
      if (this.buffer.length < 5) return;
      const length = 1 + this.buffer.readInt32BE(1);
      if (this.buffer.length < length) return;
      const type = this.buffer[0]!;
      const message = Buffer.from(this.buffer.subarray(0, length));
      this.buffer = this.buffer.subarray(length);
      if (type === TERMINATE) {
        this.socket.end();
        return;
      }
      this.pending.push(message);
      if (UNIT_END.has(type)) {
        this.push(this.pending);
        this.pending = [];
      }
    }
  }
}

export interface EmbeddedServer {
  socket: string;
  /** Stops serving; a command-line tool first lets the processes it serves finish their work. */
  close(): Promise<void>;
}

/** Serves pg to other processes on dataDir's socket and records this process as the owner in the lock file. */
export async function serveEmbedded(
  pg: PGlite,
  dataDir: string,
  kind: EmbeddedOwner['kind'],
): Promise<EmbeddedServer> {
  const locks = pg as unknown as PGliteLocks;
  const socketPath = socketPathFor(dataDir);
  const connections = new Set<net.Socket>();

  const run = (messages: Buffer[], socket: net.Socket) =>
    locks._runExclusiveQuery(async () => {
      for (const message of messages)
        await pg.execProtocolRawStream(new Uint8Array(message), {
          onRawData: (data) => {
            if (socket.writable) socket.write(data);
          },
        });
    });

  const serve = async (connection: Connection) => {
    for (let unit = await connection.next(); unit; unit = await connection.next()) {
      const first = unit;
      await locks._runExclusiveTransaction(async () => {
        let current = first;
        await run(current, connection.socket);
        // A client inside a transaction (or an extended-protocol sequence) keeps the session until it ends it; one
        // that leaves is rolled back.
        while (pg.isInTransaction() || midSequence(current)) {
          const next = await connection.next();
          if (!next) {
            // A Sync ends the sequence it left (and the skipping of messages that follows an error in one).
            if (midSequence(current)) await run([SYNC_MESSAGE], connection.socket);
            if (pg.isInTransaction()) await run([ROLLBACK], connection.socket);
            return;
          }
          current = next;
          await run(current, connection.socket);
        }
      });
    }
  };

  const server = net.createServer((socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    serve(new Connection(socket)).catch(() => socket.destroy());
  });
  rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  writeFileSync(lockPath(dataDir), JSON.stringify({ kind, pid: process.pid, socket: socketPath }));

  return {
    socket: socketPath,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if (kind === 'tool') await closed;
      else for (const socket of connections) socket.destroy();
      await closed;
      rmSync(socketPath, { force: true });
      releaseOwnership(dataDir);
    },
  };
}
