import { describe, expect, it, vi } from 'vitest';
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { classifySmtpError, createMailer, MailError } from '../../shared/mail/transport.js';
import { digestMail, newsletterLinks } from '../../shared/newsletter/messages.js';
import { parsePeriod, periodBefore } from '../../shared/newsletter/period.js';
import { newsletterTokens } from '../../shared/newsletter/tokens.js';
import { createSigner } from '../../shared/secrets.js';
import { onCommands } from '../support/smtp-servers.js';

describe('digest periods', () => {
  it('covers the last complete UTC day, ISO week and month before the send time', () => {
    const at = new Date('2024-05-06T07:00:00Z'); // a Monday
    expect(periodBefore('daily', at)).toMatchObject({
      key: 'daily-2024-05-05',
      start: new Date('2024-05-05T00:00:00Z'),
      end: new Date('2024-05-06T00:00:00Z'),
    });
    expect(periodBefore('weekly', at)).toMatchObject({
      key: 'weekly-2024-04-29',
      start: new Date('2024-04-29T00:00:00Z'),
      end: new Date('2024-05-06T00:00:00Z'),
    });
    expect(periodBefore('monthly', new Date('2024-03-01T07:00:00Z'))).toMatchObject({
      key: 'monthly-2024-02',
      start: new Date('2024-02-01T00:00:00Z'),
      end: new Date('2024-03-01T00:00:00Z'),
    });
    expect(periodBefore('monthly', new Date('2024-01-01T07:00:00Z')).key).toBe('monthly-2023-12');
    // A weekly job that runs late (Wednesday) still names the previous complete week.
    expect(periodBefore('weekly', new Date('2024-05-08T23:00:00Z')).key).toBe('weekly-2024-04-29');
  });

  it('parses the keys it writes and refuses malformed ones', () => {
    for (const key of ['daily-2024-02-29', 'weekly-2024-04-29', 'monthly-2024-12'])
      expect(parsePeriod(key)?.key).toBe(key);
    expect(parsePeriod('weekly-2024-04-30')).toBeNull(); // not a Monday
    expect(parsePeriod('daily-2023-02-29')).toBeNull();
    expect(parsePeriod('monthly-2024-13')).toBeNull();
    expect(parsePeriod('hourly-2024-01-01')).toBeNull();
  });
});

describe('newsletter tokens', () => {
  const tokens = newsletterTokens(createSigner('test-secret'));
  const other = newsletterTokens(createSigner('another-secret'));

  it('round-trips and is bound to its purpose and secret', () => {
    const confirm = tokens.confirm({ subscriberId: 7, email: 'a@example.test', frequency: 'daily' });
    expect(tokens.readConfirm(confirm)).toEqual({
      ok: true,
      claim: { subscriberId: 7, email: 'a@example.test', frequency: 'daily' },
    });
    expect(tokens.readUnsubscribe(confirm)).toEqual({ ok: false, reason: 'invalid' });
    expect(other.readConfirm(confirm)).toEqual({ ok: false, reason: 'invalid' });
    const unsubscribe = tokens.unsubscribe({ subscriberId: 7, email: 'a@example.test' });
    expect(tokens.readUnsubscribe(unsubscribe)).toEqual({
      ok: true,
      claim: { subscriberId: 7, email: 'a@example.test' },
    });
    expect(tokens.readConfirm(unsubscribe)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses an expired or altered token', () => {
    expect(
      tokens.readConfirm(
        tokens.confirm({ subscriberId: 1, email: 'a@example.test', frequency: 'weekly' }, -1),
      ),
    ).toEqual({ ok: false, reason: 'expired' });
    const token = tokens.unsubscribe({ subscriberId: 1, email: 'a@example.test' });
    const [payload, mac] = token.split('.');
    const forged = Buffer.from(
      Buffer.from(payload!, 'base64url').toString().replace('"s":1', '"s":2'),
    ).toString('base64url');
    expect(tokens.readUnsubscribe(`${forged}.${mac}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(tokens.readUnsubscribe('garbage')).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('SMTP failure classes', () => {
  it('retries 4xx and failures to connect, counts 5xx at RCPT as the recipient’s, and distrusts a lost session', () => {
    expect(
      classifySmtpError({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 450, message: '' }).failure,
    ).toBe('transient');
    expect(
      classifySmtpError({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 550, message: '' }).failure,
    ).toBe('rejected');
    expect(
      classifySmtpError({ code: 'EMESSAGE', command: 'DATA', responseCode: 554, message: '' }).failure,
    ).toBe('rejected');
    expect(
      classifySmtpError({ code: 'EENVELOPE', command: 'MAIL FROM', responseCode: 553, message: '' }).failure,
    ).toBe('config');
    expect(
      classifySmtpError({ code: 'ESOCKET', command: 'CONN', syscall: 'connect', message: '' }).failure,
    ).toBe('transient');
    expect(
      classifySmtpError({ code: 'ETIMEDOUT', command: 'CONN', timeoutType: 'GREETING_TIMEOUT', message: '' })
        .failure,
    ).toBe('transient');
    expect(
      classifySmtpError({ code: 'ETIMEDOUT', command: 'CONN', timeoutType: 'SOCKET_TIMEOUT', message: '' })
        .failure,
    ).toBe('unknown');
  });
});

describe('an SMTP server that keeps talking without ever finishing', () => {
  it('ends the send past its deadline, closes that connection, and the next send goes through', async () => {
    // The first session trickles its EHLO reply line after line, each well within the idle timeout, for ever;
    // later sessions are a plain, accepting server.
    const sessions: { closed: boolean }[] = [];
    let delivered = 0;
    const server = net.createServer((socket) => {
      const session = { closed: false };
      const trickle = sessions.push(session) === 1;
      socket.on('error', () => {});
      socket.on('close', () => (session.closed = true));
      socket.write('220 relay.test ESMTP\r\n');
      let inData = false;
      onCommands(socket, (verb, line) => {
        if (inData) {
          if (line !== '.') return;
          inData = false;
          delivered++;
          socket.write('250 2.0.0 queued\r\n');
        } else if (verb === 'EHLO' && trickle) {
          const drip = setInterval(() => socket.write('250-still thinking\r\n'), 50);
          socket.on('close', () => clearInterval(drip));
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const mailer = createMailer(
      { smtpUrl: `smtp://127.0.0.1:${port}`, mailFrom: 'a@agora.test', smtpTimeoutMs: 200 },
      pino({ level: 'silent' }),
    );
    const mail = { to: 'x@example.test', subject: 'Digest', text: 'text', html: '<p>html</p>' };
    try {
      const stuck = await mailer.send(mail).catch((err: unknown) => err);
      expect(stuck).toBeInstanceOf(MailError);
      expect(stuck).toMatchObject({ failure: 'unknown', message: /did not end within 600 ms/ });
      await vi.waitFor(() => expect(sessions[0]!.closed).toBe(true), { timeout: 10_000 });

      expect((await mailer.send(mail)).messageId).toMatch(/@/);
      expect(delivered).toBe(1);
    } finally {
      mailer.close();
      server.close();
    }
  });
});

describe('mail without SMTP_URL (the embedded default)', () => {
  it('builds the message and logs its recipient and subject, never its links (they carry tokens)', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const mailer = createMailer(
      { smtpUrl: undefined, mailFrom: 'Agora <a@agora.test>', smtpTimeoutMs: 1000 },
      pino(sink),
    );
    expect(mailer.kind).toBe('log');
    const { messageId } = await mailer.send({
      to: 'x@example.test',
      subject: 'Confirm',
      text: 'Open http://agora.test/c?token=abc',
      html: '<p>x</p>',
    });
    mailer.close();
    const entry = JSON.parse(lines.find((l) => l.includes('SMTP_URL unset'))!);
    expect(entry.mail).toEqual({
      to: 'x@example.test',
      subject: 'Confirm',
      messageId,
    });
    expect(lines.join('')).not.toContain('token=abc');
  });
});

describe('digest message', () => {
  it('keeps each question on its own lines and escapes it in the HTML part, whatever its title holds', () => {
    // An imported title is stored as the dump has it: line breaks and markup included.
    const hostile = {
      id: 7,
      title: 'Hops <img src=x onerror=alert(1)>\r\n\r\nUnsubscribe: https://evil.example/\r\n',
      slug: 'hops',
      votes: 3,
      answersCount: 1,
      tagNames: ['ipa\nUnsubscribe: https://evil.example/tag', '"><b>'],
    };
    const links = newsletterLinks('https://agora.example');
    const mail = digestMail('reader@example.com', parsePeriod('daily-2026-11-27')!, [hostile], {
      question: links.question,
      unsubscribe: links.unsubscribe('tok'),
    });
    const lines = mail.text.split(/\r?\n|\r/);
    expect(lines.filter((line) => line.startsWith('Unsubscribe:'))).toEqual([
      'Unsubscribe: https://agora.example/api/newsletter/unsubscribe?token=tok',
    ]);
    expect(lines).toContain('1. Hops <img src=x onerror=alert(1)> Unsubscribe: https://evil.example/');
    expect(mail.html).not.toMatch(/<img|<b>/);
    expect(mail.html).toContain('Hops &lt;img src=x onerror=alert(1)&gt;');
    expect(mail.subject).not.toMatch(/[\r\n]/);
  });
});
