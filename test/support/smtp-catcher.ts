import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server on loopback that records what it receives, for tests of outgoing mail. Messages are
 * parsed just enough to assert on: unfolded headers, and the text/plain and text/html parts decoded from
 * quoted-printable or base64 (mailparser is not a dependency; nodemailer's output is regular enough).
 */

export interface CaughtMail {
  from: string;
  to: string[];
  raw: string;
  /** Lower-case header name → value (unfolded; the first occurrence wins). */
  headers: Record<string, string>;
  text: string;
  html: string;
  /** Every http(s) URL in the text part, in order. */
  links: string[];
}

/** Reply to RCPT TO: 'accept', or a scripted rejection such as "450 4.2.1 Try later" or "550 5.1.1 No such user". */
export type RcptPolicy = (address: string) => 'accept' | string;

export interface SmtpCatcher {
  url: string;
  port: number;
  /** Messages the server accepted (answered 250 after DATA). */
  messages: CaughtMail[];
  /** Messages received in full but never answered (see holdAfter). */
  held: CaughtMail[];
  rcpts: string[];
  setRcptPolicy(policy: RcptPolicy): void;
  /**
   * From the moment `accepted` messages have been accepted, every further message is received but its final
   * reply withheld, as a server that hangs after DATA; null ends it.
   */
  holdAfter(accepted: number | null): void;
  /** Resolves once `count` messages were accepted (or held, with `held: true`). */
  waitFor(count: number, options?: { held?: boolean; timeoutMs?: number }): Promise<void>;
  /** Resolves with the first accepted message that matches (already received or still to come). */
  waitForMail(match: (mail: CaughtMail) => boolean, timeoutMs?: number): Promise<CaughtMail>;
  close(): Promise<void>;
}

function replyError(reply: string): Error {
  return Object.assign(new Error(reply.slice(4)), { responseCode: Number.parseInt(reply.slice(0, 3), 10) });
}

export async function startSmtpCatcher(host = '127.0.0.1'): Promise<SmtpCatcher> {
  const messages: CaughtMail[] = [];
  const held: CaughtMail[] = [];
  const rcpts: string[] = [];
  const listeners = new Set<() => void>();
  let policy: RcptPolicy = () => 'accept';
  let holdAfter: number | null = null;
  const notify = () => listeners.forEach((l) => l());

  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideENHANCEDSTATUSCODES: true,
    closeTimeout: 200,
    onRcptTo(address, _session, callback) {
      rcpts.push(address.address);
      const reply = policy(address.address);
      callback(reply === 'accept' ? undefined : replyError(reply));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'), session.envelope);
        if (holdAfter !== null && messages.length >= holdAfter) {
          held.push(mail);
          notify();
          return; // never answered: the sender sees a server that hangs after the message body
        }
        messages.push(mail);
        notify();
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://${host}:${port}`,
    port,
    messages,
    held,
    rcpts,
    setRcptPolicy: (p) => void (policy = p),
    holdAfter: (count) => void (holdAfter = count),
    waitFor(count, options = {}) {
      const list = options.held ? held : messages;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (list.length >= count) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`smtp catcher: ${list.length} of ${count} messages arrived`));
        }, options.timeoutMs ?? 20_000);
        listeners.add(check);
        check();
      });
    },
    waitForMail(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(match);
          if (found) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`smtp catcher: no matching message among ${messages.length}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Envelope {
  mailFrom: false | { address: string };
  rcptTo: { address: string }[];
}

function parseMail(raw: string, envelope: Envelope): CaughtMail {
  const { headers, body } = splitHeaders(raw);
  const parts: { type: string; content: string }[] = [];
  collectParts(headers, body, parts);
  const text = parts.find((p) => p.type === 'text/plain')?.content ?? '';
  const html = parts.find((p) => p.type === 'text/html')?.content ?? '';
  return {
    from: envelope.mailFrom ? envelope.mailFrom.address : '',
    to: envelope.rcptTo.map((r) => r.address),
    raw,
    headers,
    text,
    html,
    links: text.match(/https?:\/\/[^\s<>"]+/g) ?? [],
  };
}

function splitHeaders(entity: string): { headers: Record<string, string>; body: string } {
  const end = entity.search(/\r?\n\r?\n/);
  const head = end < 0 ? entity : entity.slice(0, end);
  const body = end < 0 ? '' : entity.slice(end).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function collectParts(
  headers: Record<string, string>,
  body: string,
  out: { type: string; content: string }[],
): void {
  const contentType = headers['content-type'] ?? 'text/plain';
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
    if (!boundary) return;
    const sections = body.split(`--${boundary}`).slice(1);
    for (const section of sections) {
      if (section.startsWith('--')) break;
      const part = splitHeaders(section.replace(/^\r?\n/, ''));
      collectParts(part.headers, part.body, out);
    }
    return;
  }
  out.push({ type, content: decode(body, headers['content-transfer-encoding'] ?? '7bit') });
}

function decode(body: string, encoding: string): string {
  switch (encoding.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable': {
      const bytes = body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
      return Buffer.from(bytes, 'latin1').toString('utf8');
    }
    default:
      return body;
  }
}
