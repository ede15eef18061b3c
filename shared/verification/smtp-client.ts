import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { parseReply, type SmtpReply } from './smtp-reply.js';

/**
 * A minimal SMTP client for probing: greeting, EHLO/HELO, STARTTLS, and single commands
 * (MAIL, RCPT, RSET, QUIT). It never sends DATA. One command at a time, no pipelining, so
 * every reply belongs to the command just sent, and a reply nobody asked for is a protocol error: read as the
 * next command's answer it would make a mailbox exist or not. Every read has a deadline.
 */

export type SmtpErrorKind = 'timeout' | 'connection_failed' | 'closed' | 'protocol' | 'aborted';

export class SmtpError extends Error {
  constructor(
    readonly kind: SmtpErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'SmtpError';
  }
}

export interface SmtpConnectOptions {
  /** IP address to connect to (already resolved and checked by the host guard). */
  address: string;
  port: number;
  /** The MX host name: used for TLS SNI. */
  servername: string;
  heloName: string;
  /** Deadline of each step: connect, greeting, each command, TLS handshake. */
  timeoutMs: number;
  /** Aborts everything (the whole probe's deadline). */
  signal?: AbortSignal;
}

// Guards against a hostile server streaming an endless line or reply.
const MAX_LINE = 4096;
const MAX_LINES = 200;

export class SmtpSession {
  readonly extensions = new Set<string>();
  secure = false;
  private stream: Duplex;
  private buffer = '';
  private lines: string[] = [];
  private failure: SmtpError | null = null;
  private waiter: { resolve: (r: SmtpReply) => void; reject: (e: SmtpError) => void } | null = null;
  // One reply timer per session, re-armed by each read (not a timer per command); it does nothing when no read waits.
  private timer: NodeJS.Timeout | null = null;
  // The deadline the session is bound to now (the probe using it): its abort ends the session.
  private signal: AbortSignal | undefined;
  // The command whose reply is awaited, for the timeout's message.
  private awaited = '';
  private readonly onTimeout = (): void => {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = null;
    const step = this.awaited.split(' ')[0] || this.awaited;
    const err = new SmtpError('timeout', `no reply to ${step} within ${this.opts.timeoutMs} ms`);
    this.fail(err);
    this.stream.destroy();
    waiter.reject(err);
  };
  private readonly onData = (chunk: Buffer): void => this.receive(chunk.toString('utf8'));
  private readonly onEnd = (): void => this.fail(new SmtpError('closed', 'connection closed by server'));
  private readonly onError = (err: Error): void => this.fail(new SmtpError('closed', err.message));
  private readonly onAbort = (): void => {
    this.fail(new SmtpError('aborted', 'probe deadline reached'));
    this.stream.destroy();
  };

  private constructor(
    private readonly socket: net.Socket,
    private readonly opts: SmtpConnectOptions,
  ) {
    this.stream = socket;
    this.attach(socket);
    this.signal = opts.signal;
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Opens a TCP connection and reads the greeting (any code: the caller judges it). */
  static async connect(opts: SmtpConnectOptions): Promise<{ session: SmtpSession; greeting: SmtpReply }> {
    if (opts.signal?.aborted) throw new SmtpError('aborted', 'probe deadline reached');
    const socket = net.connect({ host: opts.address, port: opts.port });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => done(new SmtpError('timeout', 'connect timed out')), opts.timeoutMs);
      const done = (err?: SmtpError): void => {
        clearTimeout(timer);
        socket.off('connect', onConnect).off('error', onError);
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) {
          socket.destroy();
          reject(err);
        } else resolve();
      };
      const onConnect = (): void => done();
      const onError = (err: Error): void => done(new SmtpError('connection_failed', err.message));
      const onAbort = (): void => done(new SmtpError('aborted', 'probe deadline reached'));
      socket.once('connect', onConnect).once('error', onError);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
    const session = new SmtpSession(socket, opts);
    try {
      return { session, greeting: await session.read('greeting') };
    } catch (err) {
      session.close();
      throw err;
    }
  }

  /** EHLO, falling back to HELO when EHLO gets a 5xx (RFC 5321 §4.1.4: old servers). */
  async hello(): Promise<SmtpReply> {
    const ehlo = await this.command(`EHLO ${this.opts.heloName}`);
    if (ehlo.code >= 500 && ehlo.code < 600) return this.command(`HELO ${this.opts.heloName}`);
    this.extensions.clear();
    if (ehlo.code === 250) {
      // First line is the server's greeting name; the others are keywords with parameters.
      for (const line of ehlo.raw.split('\n').slice(1))
        this.extensions.add(line.slice(4).split(' ')[0]!.toUpperCase());
    }
    return ehlo;
  }

  /** STARTTLS then a fresh EHLO. Certificates are not checked: MX certificates are routinely
   * self-signed and we send no secret; TLS only keeps the probe from looking like a downgrade. */
  async startTls(): Promise<SmtpReply> {
    const reply = await this.command('STARTTLS');
    if (reply.code !== 220) return reply;
    // Plain text sent after the 220 would be read as coming over TLS (RFC 3207 §4.2: the client discards what it
    // learned before the handshake; a server or man in the middle injecting replies there is misbehaving).
    if (this.buffer.length > 0 || this.lines.length > 0) this.protocolError('data after the STARTTLS reply');
    if (this.failure) throw this.failure;
    this.detach(this.stream);
    const servername = net.isIP(this.opts.servername) ? undefined : this.opts.servername;
    const secure = tls.connect({ socket: this.socket, servername, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => fail(new SmtpError('timeout', 'TLS handshake timed out')),
        this.opts.timeoutMs,
      );
      const fail = (err: SmtpError): void => {
        clearTimeout(timer);
        // The plain stream is detached and the socket gone with the TLS one: the session is over.
        this.failure ??= err;
        secure.destroy();
        reject(err);
      };
      secure.once('secureConnect', () => {
        clearTimeout(timer);
        resolve();
      });
      secure.once('error', (err) => fail(new SmtpError('connection_failed', `TLS: ${err.message}`)));
    });
    this.stream = secure;
    this.secure = true;
    this.attach(secure);
    return this.hello();
  }

  /** False once the connection failed, timed out or was closed: such a session cannot be used again. */
  get alive(): boolean {
    return this.failure === null;
  }

  /**
   * Whether the server has begun saying something nobody asked for (typically "421 4.4.2 idle timeout" before it
   * hangs up; a whole such reply already failed the session): it must not be used again.
   */
  get spoke(): boolean {
    return this.lines.length > 0 || this.buffer.length > 0;
  }

  /** Ties the session to another probe's deadline (a pooled session outlives the probe that opened it). */
  bindSignal(signal: AbortSignal | undefined): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.signal = signal;
    signal?.addEventListener('abort', this.onAbort, { once: true });
    if (signal?.aborted) this.onAbort();
  }

  /** Ends the session as its deadline would: what waits fails with an `aborted` error. */
  abort(): void {
    this.onAbort();
  }

  /** Sends one command line and reads its reply. */
  async command(line: string): Promise<SmtpReply> {
    if (this.failure) throw this.failure;
    this.stream.write(`${line}\r\n`);
    return this.read(line);
  }

  /** Polite goodbye: QUIT (which ends any open transaction, RFC 5321 §4.1.1.10), errors ignored. */
  async quit(): Promise<void> {
    try {
      if (!this.failure) await this.command('QUIT');
    } catch {
      // The verdicts are already collected; a server that hangs up first is fine.
    } finally {
      this.close();
    }
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.fail(new SmtpError('closed', 'session closed'));
    this.stream.destroy();
  }

  /** The next reply; `awaited` (the command, or the step) names it in a timeout. */
  private read(awaited: string): Promise<SmtpReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<SmtpReply>((resolve, reject) => {
      this.awaited = awaited;
      this.waiter = { resolve, reject };
      if (this.timer) this.timer.refresh();
      else this.timer = setTimeout(this.onTimeout, this.opts.timeoutMs).unref();
    });
  }

  private receive(text: string): void {
    this.buffer += text;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      // The cap holds however the line arrived: whole in one read, or over several (the remainder check below).
      if (newline > MAX_LINE) return this.protocolError('reply line too long');
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      // RFC 5321 §4.2: a reply code starts with 2 to 5; "999" or "199" says nothing we could grade.
      if (!/^[2-5]\d{2}([ -]|$)/.test(line))
        return this.protocolError(`malformed reply line: ${line.slice(0, 80)}`);
      // RFC 5321 §4.2.1: every line of a reply carries the same code; which one would count is anyone's guess.
      if (this.lines.length > 0 && line.slice(0, 3) !== this.lines[0]!.slice(0, 3))
        return this.protocolError(
          `reply lines with different codes: ${this.lines[0]!.slice(0, 3)}, ${line.slice(0, 3)}`,
        );
      this.lines.push(line);
      if (this.lines.length > MAX_LINES) return this.protocolError('reply too long');
      if (line.charAt(3) !== '-') {
        const reply = parseReply(this.lines);
        this.lines = [];
        const waiter = this.waiter;
        this.waiter = null;
        if (!waiter) return this.protocolError(`reply to no command: ${reply.raw.slice(0, 80)}`);
        waiter.resolve(reply);
      }
    }
    if (this.buffer.length > MAX_LINE) this.protocolError('reply line too long');
  }

  private protocolError(message: string): void {
    this.fail(new SmtpError('protocol', message));
    this.stream.destroy();
  }

  private fail(err: SmtpError): void {
    this.failure ??= err;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(this.failure);
  }

  private attach(stream: Duplex): void {
    stream.on('data', this.onData).on('end', this.onEnd).on('close', this.onEnd).on('error', this.onError);
  }

  private detach(stream: Duplex): void {
    stream
      .off('data', this.onData)
      .off('end', this.onEnd)
      .off('close', this.onEnd)
      .off('error', this.onError);
  }
}
