import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SmtpError, SmtpSession } from '../../shared/verification/smtp-client.js';

// Protocol edge cases against raw scripted sockets.

const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(onConnection: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

const connect = (port: number, timeoutMs = 300) =>
  SmtpSession.connect({
    address: '127.0.0.1',
    port,
    servername: 'mx.test',
    heloName: 'probe.test',
    timeoutMs,
  });

describe('SmtpSession', () => {
  it('reads a greeting split across TCP packets and multi-line EHLO extensions', async () => {
    const port = await serve((socket) => {
      socket.write('220-mx.test ESMTP\r\n');
      setTimeout(() => socket.write('220 ready\r\n'), 20);
      socket.on('data', () =>
        socket.write('250-mx.test\r\n250-SIZE 1000\r\n250-SMTPUTF8\r\n250 ENHANCEDSTATUSCODES\r\n'),
      );
    });
    const { session, greeting } = await connect(port);
    expect(greeting).toMatchObject({ code: 220, text: 'mx.test ESMTP ready' });
    expect((await session.hello()).code).toBe(250);
    expect([...session.extensions]).toEqual(['SIZE', 'SMTPUTF8', 'ENHANCEDSTATUSCODES']);
    session.close();
  });

  it('times out a server that never greets', async () => {
    const port = await serve(() => undefined);
    await expect(connect(port, 100)).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('reports a refused connection', async () => {
    const port = await serve(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    await expect(connect(port)).rejects.toMatchObject({ kind: 'connection_failed' });
  });

  it('rejects a garbage reply as a protocol error', async () => {
    const port = await serve((socket) => socket.write('HTTP/1.1 400 Bad Request\r\n'));
    await expect(connect(port)).rejects.toBeInstanceOf(SmtpError);
    await expect(connect(port)).rejects.toMatchObject({ kind: 'protocol' });
  });

  it.each(['999 weird', '199 early', '099 zero', '699 six'])(
    'rejects a reply code outside 2xx-5xx (%s) as a protocol error',
    async (reply) => {
      const greeting = await serve((socket) => socket.write(`${reply}\r\n`));
      const greeted = await connect(greeting).catch((err: unknown) => err);
      if (!(greeted instanceof SmtpError)) (greeted as { session: SmtpSession }).session.close();
      expect(greeted).toMatchObject({ kind: 'protocol' });
      const rcpt = await serve((socket) => {
        socket.write('220 hi\r\n');
        socket.on('data', () => socket.write(`${reply}\r\n`));
      });
      const { session } = await connect(rcpt);
      const answered = await session.command('RCPT TO:<a@b.test>').catch((err: unknown) => err);
      session.close();
      expect(answered).toMatchObject({ kind: 'protocol' });
    },
  );

  it('refuses an endless reply line', async () => {
    const port = await serve((socket) => socket.write('220 ' + 'x'.repeat(10_000)));
    await expect(connect(port)).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('reports a connection closed mid-command', async () => {
    const port = await serve((socket) => {
      socket.write('220 hi\r\n');
      socket.on('data', () => socket.destroy());
    });
    const { session } = await connect(port);
    await expect(session.command('RCPT TO:<a@b.test>')).rejects.toMatchObject({ kind: 'closed' });
  });

  // A reply is only ever the answer to the command just sent: one read as the next command's answer would make a
  // mailbox exist or not.
  it('fails the session on a reply nobody asked for, not handing it to the next command', async () => {
    const port = await serve((socket) => {
      socket.write('220 hi\r\n250 2.0.0 unsolicited\r\n');
      socket.on('data', () => socket.write('550 5.1.1 no such user\r\n'));
    });
    const { session } = await connect(port);
    await expect(session.command('RCPT TO:<a@b.test>')).rejects.toMatchObject({ kind: 'protocol' });
    expect(session.alive).toBe(false);
  });

  it("fails the session on a second reply after the command's own", async () => {
    const port = await serve((socket) => {
      socket.write('220 hi\r\n');
      socket.on('data', () => socket.write('550 5.1.1 no such user\r\n250 2.1.5 ok\r\n'));
    });
    const { session } = await connect(port);
    expect((await session.command('RCPT TO:<a@b.test>')).code).toBe(550);
    await expect(session.command('RCPT TO:<c@b.test>')).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('refuses a multi-line reply whose lines carry different codes', async () => {
    const port = await serve((socket) => {
      socket.write('220 hi\r\n');
      socket.on('data', () => socket.write('550-5.1.1 no such user\r\n250 2.1.5 ok\r\n'));
    });
    const { session } = await connect(port);
    await expect(session.command('RCPT TO:<a@b.test>')).rejects.toMatchObject({ kind: 'protocol' });
  });

  it('refuses plain text sent after the STARTTLS reply (RFC 3207 §4.2)', async () => {
    const port = await serve((socket) => {
      socket.write('220 hi\r\n');
      socket.on('data', (chunk: Buffer) =>
        socket.write(
          chunk.toString().startsWith('STARTTLS') ? '220 go ahead\r\n250 injected\r\n' : '250 ok\r\n',
        ),
      );
    });
    const { session } = await connect(port);
    await expect(session.startTls()).rejects.toMatchObject({ kind: 'protocol' });
  });

  it.each([
    ['answers the handshake with garbage', 'connection_failed', 'HTTP/1.1 400 Bad Request\r\n\r\n'],
    ['never answers the handshake', 'timeout', null],
  ] as const)(
    'a server that %s after its 220 to STARTTLS fails the session: it is not alive, nothing more is sent',
    async (_, kind, answer) => {
      const port = await serve((socket) => {
        socket.write('220 hi\r\n');
        let started = false;
        socket.on('data', (chunk: Buffer) => {
          if (started) {
            if (answer) socket.write(answer);
          } else if (chunk.toString().startsWith('STARTTLS')) {
            started = true;
            socket.write('220 go ahead\r\n');
          } else socket.write('250 ok\r\n');
        });
      });
      const { session } = await connect(port, 200);
      await expect(session.startTls()).rejects.toMatchObject({ kind });
      expect(session.alive).toBe(false);
      await expect(session.command('RCPT TO:<a@b.test>')).rejects.toMatchObject({ kind });
    },
  );
});
