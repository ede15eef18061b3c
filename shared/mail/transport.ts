import nodemailer from 'nodemailer';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

/**
 * Outgoing mail (newsletter confirmations and digests). With SMTP_URL, a pooled nodemailer SMTP transport;
 * without it (the embedded default, a laptop with no mail server), nodemailer's JSON transport builds the
 * message and we log its recipient and subject (never its links: they are bearer tokens).
 */

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers?: Record<string, string>;
}

export interface Mailer {
  kind: 'smtp' | 'log';
  /** Resolves once the receiving server accepted the message (250 after DATA); rejects with a MailError. */
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): void;
}

/**
 * What a failed send means for a retry:
 * - `transient`: refused with a 4xx, or the connection failed before the message was handed over; safe to retry.
 * - `rejected`: refused for good (5xx) at RCPT or DATA, i.e. by or for the recipient.
 * - `config`: refused for good before any recipient was named (MAIL FROM, authentication): our side is wrong.
 * - `unknown`: the connection was lost after the message body went out; it may have been delivered.
 */
export type MailFailure = 'transient' | 'rejected' | 'config' | 'unknown';

export class MailError extends Error {
  constructor(
    readonly failure: MailFailure,
    message: string,
    readonly responseCode?: number,
  ) {
    super(message);
    this.name = 'MailError';
  }
}

interface SmtpErrorFields {
  code?: string;
  command?: string;
  syscall?: string;
  responseCode?: number;
  timeoutType?: string;
  rejectedErrors?: SmtpErrorFields[];
  message: string;
}

/**
 * Sorts a nodemailer error by what a retry may do. Only a reply from the server proves where the message
 * stands; without one, only a failure to connect at all is known to be harmless. Every other lost connection
 * (nodemailer's `command` is not reliable on pooled connections) is `unknown`: the caller must assume the
 * message may have been delivered.
 */
export function classifySmtpError(err: SmtpErrorFields): MailError {
  const rejected = err.rejectedErrors?.[0];
  const code = err.responseCode ?? rejected?.responseCode;
  const command = err.command ?? rejected?.command;
  const text = err.message;
  if (code !== undefined && code >= 400 && code < 500) return new MailError('transient', text, code);
  if (code === 503) return new MailError('transient', text, code);
  if (code !== undefined && code >= 500) {
    const forRecipient =
      command === 'RCPT TO' || command === 'DATA' || (command === undefined && err.code === 'EENVELOPE');
    return new MailError(forRecipient ? 'rejected' : 'config', text, code);
  }
  const neverConnected =
    err.timeoutType === 'CONNECT_TIMEOUT' ||
    err.timeoutType === 'GREETING_TIMEOUT' ||
    err.syscall === 'connect' ||
    err.code === 'EDNS';
  return new MailError(neverConnected ? 'transient' : 'unknown', text);
}

export function createMailer(
  config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'smtpTimeoutMs'>,
  logger: Logger,
): Mailer {
  if (!config.smtpUrl) {
    const transport = nodemailer.createTransport({ jsonTransport: true }, { from: config.mailFrom });
    return {
      kind: 'log',
      async send(mail) {
        const info = await transport.sendMail(mail);
        // Recipient and subject only: the body carries confirmation and unsubscribe links, which are bearer
        // tokens and must not sit in logs. To read the mails themselves, point SMTP_URL at a local catcher.
        logger.info(
          { mail: { to: mail.to, subject: mail.subject, messageId: info.messageId } },
          'mail not sent (SMTP_URL unset)',
        );
        return { messageId: info.messageId };
      },
      close: () => transport.close(),
    };
  }
  // nodemailer's timeouts are per step and idle-only: a server that keeps sending, slowly, never trips them.
  const deadlineMs = SEND_DEADLINE_STEPS * config.smtpTimeoutMs;
  const open = () =>
    nodemailer.createTransport(
      {
        url: config.smtpUrl,
        pool: true,
        // As many connections as a worker runs send jobs at once (workers/newsletter/processor.ts).
        maxConnections: 8,
        maxMessages: 100,
        connectionTimeout: config.smtpTimeoutMs,
        greetingTimeout: config.smtpTimeoutMs,
        socketTimeout: config.smtpTimeoutMs,
        dnsTimeout: config.smtpTimeoutMs,
      },
      { from: config.mailFrom },
    );
  let transport = open();
  return {
    kind: 'smtp',
    async send(mail) {
      const pool = transport;
      const sending = pool.sendMail(mail);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new SendDeadline()), deadlineMs);
      });
      try {
        const info = await Promise.race([sending, deadline]);
        return { messageId: info.messageId };
      } catch (err) {
        if (!(err instanceof SendDeadline)) throw classifySmtpError(err as SmtpErrorFields);
        // The stuck connection cannot be singled out in the pool: a fresh pool takes the next sends and the old
        // one is closed, failing whatever else it was sending (as a lost connection would).
        sending.catch(() => {});
        if (transport === pool) {
          transport = open();
          pool.close({ force: true });
        }
        throw new MailError('unknown', `the SMTP exchange did not end within ${deadlineMs} ms`);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => transport.close(),
  };
}

/** A whole send (a pooled connection, greeting, commands, the message) may take this many SMTP_TIMEOUT_MS. */
const SEND_DEADLINE_STEPS = 3;

class SendDeadline extends Error {}
