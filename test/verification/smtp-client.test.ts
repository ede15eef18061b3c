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
});
