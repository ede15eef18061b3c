import { onCommands } from '../support/smtp-servers.js';
import net from 'node:net';

/**
 * A minimal SMTP server on node:net that answers every command after a fixed delay, for the worker-kill test and
 * the verification benchmark (smtp-server is too heavy for hundreds of listeners). It accepts the local parts
 * `accepts` says yes to and refuses the rest with 550 5.1.1, and counts connections, sessions open at once,
 * RCPTs and replies, per listening address.
 */

export interface SlowSmtpStats {
  connections: number;
  open: number;
  maxOpen: number;
  rcpts: number;
  /** Replies sent (greeting included): each one cost the client `delayMs` of a connection slot. */
  replies: number;
}

export interface SlowSmtpOptions {
  /** Delay before each reply (greeting included), ms. */
  delayMs: number;
  accepts: (address: string) => boolean;
  /** Called on every RCPT, after it was counted; `client` is the prober's address (which host probed). */
  onRcpt?: (address: string, host: string, client: string) => void;
  /** Connections (numbered from 1 per host) that go silent after their first RCPT: a probe frozen mid-way. */
  freezeAfterFirstRcpt?: (connection: number) => boolean;
}

export interface SlowSmtpWorld {
  port: number;
  stats: Map<string, SlowSmtpStats>;
  close(): Promise<void>;
}

/** Listens on every address of `hosts` with one shared port (the verifier has one smtpPort for every MX). */
export async function startSlowSmtp(
  hosts: readonly string[],
  options: SlowSmtpOptions,
): Promise<SlowSmtpWorld> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const servers: net.Server[] = [];
    const sockets = new Set<net.Socket>();
    const stats = new Map<string, SlowSmtpStats>();
    try {
      for (const host of hosts) {
        const s: SlowSmtpStats = { connections: 0, open: 0, maxOpen: 0, rcpts: 0, replies: 0 };
        stats.set(host, s);
        const server = net.createServer((socket) => serve(socket, host, s, options, sockets));
        servers.push(server);
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, host, () => {
            server.off('error', reject);
            resolve();
          });
        });
      }
      const close = async () => {
        for (const socket of sockets) socket.destroy();
        await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      };
      return { port, stats, close };
    } catch (err) {
      for (const s of servers) s.close();
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  throw new Error('no free port for the slow SMTP world');
}

function serve(
  socket: net.Socket,
  host: string,
  s: SlowSmtpStats,
  options: SlowSmtpOptions,
  sockets: Set<net.Socket>,
): void {
  s.connections++;
  const frozen = options.freezeAfterFirstRcpt?.(s.connections) ?? false;
  let rcptSeen = false;
  s.open++;
  s.maxOpen = Math.max(s.maxOpen, s.open);
  sockets.add(socket);
  let ended = false;
  // A session ends at QUIT (before the 221) or on close, so a client that waits for the 221 before its next
  // connection is never counted twice.
  const end = () => {
    if (!ended) s.open--;
    ended = true;
  };
  socket.on('close', () => {
    end();
    sockets.delete(socket);
  });
  socket.on('error', () => undefined);
  socket.setNoDelay(true);

  // Replies go out in order, each `delayMs` after its command arrived (a pipelining client is not penalised twice).
  let last = Promise.resolve();
  const reply = (text: string, after?: () => void) => {
    if (frozen && rcptSeen) return;
    s.replies++;
    const due = Date.now() + options.delayMs;
    last = last.then(
      () =>
        new Promise<void>((resolve) => {
          setTimeout(
            () => {
              if (!socket.destroyed) socket.write(`${text}\r\n`);
              after?.();
              resolve();
            },
            Math.max(0, due - Date.now()),
          );
        }),
    );
  };

  reply('220 slow.test ESMTP');
  onCommands(socket, (verb, line) => {
    if (verb === 'EHLO') reply('250-slow.test\r\n250 ENHANCEDSTATUSCODES');
    else if (verb === 'HELO' || verb === 'RSET' || verb === 'MAIL') reply('250 2.0.0 Ok');
    else if (verb === 'RCPT') {
      const address = /<(.*)>/.exec(line)?.[1] ?? '';
      s.rcpts++;
      options.onRcpt?.(address, host, socket.remoteAddress ?? '');
      reply(options.accepts(address) ? '250 2.1.5 Ok' : '550 5.1.1 No such user');
      rcptSeen = true;
    } else if (verb === 'QUIT') {
      end();
      reply('221 2.0.0 Bye', () => socket.end());
    } else reply('502 5.5.2 Command not recognized');
  });
}
