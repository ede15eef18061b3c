import net from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';

/**
 * A loopback "mail world" for verification tests: each MX is a real server on its own
 * 127.0.0.x address, all on one shared port (the verifier has one smtpPort for every MX).
 * `smtp` servers are smtp-server instances with scripted mailboxes; `raw` servers are
 * hand-written scripts on node:net for misbehaviour smtp-server cannot produce (tarpits,
 * dropped sessions, exact multi-line replies).
 */

/** A reply as it goes on the wire; "\n" separates the lines of a raw multi-line reply. */
export type ScriptedReply = string;

/** Calls onCommand with each complete command line (CRLF or LF ended) and its upper-cased verb. */
export function onCommands(socket: net.Socket, onCommand: (verb: string, line: string) => void): void {
  let buffer = '';
  socket.on('data', (chunk) => {
    buffer += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      onCommand(line.split(' ')[0]!.toUpperCase(), line);
    }
  });
}

export interface SmtpSpec {
  kind: 'smtp';
  /** Reply per local part (lower case); 'accept' or a rejection like "550 5.1.1 User unknown". */
  mailboxes?: Record<string, 'accept' | ScriptedReply>;
  /** Reply to any local part not listed: 'accept' makes a catch-all; default 550 5.1.1. */
  others?: 'accept' | ScriptedReply;
  /** Refuse MAIL FROM until STARTTLS, as many providers do. */
  requireTls?: boolean;
  hideStartTls?: boolean;
  hideSmtpUtf8?: boolean;
  /** Reply to MAIL FROM instead of accepting it. */
  mailFrom?: ScriptedReply;
}

/**
 * What a raw server does in answer: a reply, drop the connection, never answer, or misbehave on the wire:
 * `endless` streams "250-…" continuation lines until the client hangs up; `{ trickle }` sends the reply one byte
 * every `everyMs`; `{ after }` sends it that many ms late; `{ thenClose }` replies, then closes the connection.
 */
export type RawAction =
  | ScriptedReply
  | 'drop'
  | 'hang'
  | 'endless'
  | { trickle: ScriptedReply; everyMs: number }
  | { after: number; reply: ScriptedReply }
  | { thenClose: ScriptedReply };

export interface RawSpec {
  kind: 'raw';
  /** null: accept the connection and never say a word (a tarpit). */
  greeting?: RawAction | null;
  /** Reply to EHLO (default: 250 with ENHANCEDSTATUSCODES). */
  ehlo?: ScriptedReply;
  mailFrom?: RawAction;
  rcpt?: (address: string) => RawAction | undefined;
  /** Reply to STARTTLS (default: 502, not recognised; the raw server never speaks TLS). */
  starttls?: RawAction;
  /** Every reply, the greeting included, goes out this many ms late (a tarpit answering each command slowly). */
  delayMs?: number;
  /** End reply lines with a bare LF instead of CRLF. */
  bareLf?: boolean;
}

export type ServerSpec = SmtpSpec | RawSpec;

export interface ServerLog {
  connections: number;
  /** Raw servers only: sessions open right now, and the most ever open at once. A session
   * ends at QUIT (before the 221 goes out) or on close, so a client that waits for the 221
   * before opening the next connection can never be counted twice. */
  open: number;
  maxOpen: number;
  rcpts: string[];
  heloNames: string[];
  secureMailFroms: number;
  dataCommands: number;
}

export interface MailWorld {
  port: number;
  logs: Record<string, ServerLog>;
  close(): Promise<void>;
}

interface Running {
  close(): Promise<void>;
}

/** Starts one server per address on a shared free port (retrying another port if taken). */
export async function startMailWorld(specs: Record<string, ServerSpec>): Promise<MailWorld> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const logs: Record<string, ServerLog> = {};
    const running: Running[] = [];
    try {
      for (const [address, spec] of Object.entries(specs)) {
        const log: ServerLog = {
          connections: 0,
          open: 0,
          maxOpen: 0,
          rcpts: [],
          heloNames: [],
          secureMailFroms: 0,
          dataCommands: 0,
        };
        logs[address] = log;
        running.push(
          spec.kind === 'smtp'
            ? await startSmtp(address, port, spec, log)
            : await startRaw(address, port, spec, log),
        );
      }
      return { port, logs, close: async () => void (await Promise.all(running.map((r) => r.close()))) };
    } catch (err) {
      await Promise.all(running.map((r) => r.close()));
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  throw new Error('no free port for the mail world');
}

function replyError(reply: ScriptedReply): Error {
  const code = Number.parseInt(reply.slice(0, 3), 10);
  return Object.assign(new Error(reply.slice(4)), { responseCode: code });
}

async function startSmtp(address: string, port: number, spec: SmtpSpec, log: ServerLog): Promise<Running> {
  const server = new SMTPServer({
    logger: false,
    // Tests end with every client gone; do not linger on a stray connection.
    closeTimeout: 200,
    disabledCommands: ['AUTH'],
    // Tests write their enhanced codes into the reply text, exactly as real servers send them.
    hideENHANCEDSTATUSCODES: true,
    hideSTARTTLS: spec.hideStartTls ?? false,
    hideSMTPUTF8: spec.hideSmtpUtf8 ?? false,
    onConnect(_session, callback) {
      log.connections++;
      callback();
    },
    onMailFrom(_from: SMTPServerAddress, session: SMTPServerSession, callback) {
      log.heloNames.push(session.hostNameAppearsAs);
      if (spec.requireTls && !session.secure)
        return callback(replyError('530 5.7.0 Must issue a STARTTLS command first'));
      if (session.secure) log.secureMailFroms++;
      if (spec.mailFrom) return callback(replyError(spec.mailFrom));
      callback();
    },
    onRcptTo(to: SMTPServerAddress, _session, callback) {
      log.rcpts.push(to.address);
      const local = to.address.slice(0, to.address.lastIndexOf('@')).toLowerCase();
      const reply = spec.mailboxes?.[local] ?? spec.others ?? '550 5.1.1 User unknown';
      if (reply === 'accept') return callback();
      callback(replyError(reply));
    },
    onData(stream, _session, callback) {
      log.dataCommands++;
      stream.resume();
      stream.on('end', () => callback(replyError('554 5.6.0 tests accept no data')));
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, address, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function startRaw(address: string, port: number, spec: RawSpec, log: ServerLog): Promise<Running> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    log.connections++;
    log.open++;
    log.maxOpen = Math.max(log.maxOpen, log.open);
    let ended = false;
    const end = (): void => {
      if (!ended) log.open--;
      ended = true;
    };
    sockets.add(socket);
    socket.on('close', () => {
      end();
      sockets.delete(socket);
    });
    socket.on('error', () => undefined);
    const eol = spec.bareLf ? '\n' : '\r\n';
    const wire = (text: string): string => text.split('\n').join(eol) + eol;
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => void): void => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!socket.destroyed) fn();
      }, ms);
      timers.add(timer);
    };
    socket.on('close', () => timers.forEach((t) => clearTimeout(t)));
    const act = (action: RawAction): void => {
      if (action === 'drop') socket.destroy();
      else if (action === 'hang') return;
      else if (action === 'endless') {
        const more = (): void => {
          if (socket.destroyed) return;
          socket.write('250-and more\r\n'.repeat(50));
          later(1, more);
        };
        more();
      } else if (typeof action === 'string') socket.write(wire(action));
      else if ('trickle' in action) {
        const bytes = Buffer.from(wire(action.trickle));
        const next = (i: number): void => {
          if (i >= bytes.length) return;
          socket.write(bytes.subarray(i, i + 1));
          later(action.everyMs, () => next(i + 1));
        };
        next(0);
      } else if ('after' in action) later(action.after, () => act(action.reply));
      else {
        socket.write(wire(action.thenClose));
        socket.end();
      }
    };
    const send = (reply: RawAction | undefined, fallback: string): void => {
      const action = reply ?? fallback;
      if (spec.delayMs) later(spec.delayMs, () => act(action));
      else act(action);
    };
    if (spec.greeting === null) return;
    send(spec.greeting, '220 raw.test ESMTP');
    onCommands(socket, (verb, line) => {
      if (verb === 'EHLO') {
        log.heloNames.push(line.slice(5));
        send(spec.ehlo, '250-raw.test\n250 ENHANCEDSTATUSCODES');
      } else if (verb === 'HELO') {
        log.heloNames.push(line.slice(5));
        send(undefined, '250 raw.test');
      } else if (verb === 'STARTTLS') send(spec.starttls, '502 5.5.2 Command not recognized');
      else if (verb === 'MAIL') send(spec.mailFrom, '250 2.1.0 Ok');
      else if (verb === 'RCPT') {
        const rcpt = /<(.*)>/.exec(line)?.[1] ?? '';
        log.rcpts.push(rcpt);
        send(spec.rcpt?.(rcpt), '250 2.1.5 Ok');
      } else if (verb === 'RSET') send(undefined, '250 2.0.0 Ok');
      else if (verb === 'QUIT') {
        end();
        send(undefined, '221 2.0.0 Bye');
        socket.end();
      } else if (verb === 'DATA') {
        log.dataCommands++;
        send(undefined, '554 5.5.1 No thanks');
      } else send(undefined, '502 5.5.2 Command not recognized');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
