import net from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';

// A client that sends its headers and then never finishes its body (silent, or trickling a byte at a time for
// ever) gets a 408 with the error body at HTTP_REQUEST_TIMEOUT_MS, on both services, through a real socket; then
// the server closes the connection, even when the client keeps its own side open and goes on sending.

interface Exchange {
  /** Everything the server sent. */
  received: string;
  /**
   * The server closed the connection: its FIN for a silent client; for a trickling one, which keeps writing after
   * the FIN, the error of a write to the socket the server destroyed.
   */
  closedByServer: boolean;
}

/**
 * Writes `head` and the start of a body, then, every 100 ms, one more byte when `trickle` (never the whole body),
 * for as long as the socket is open. Half-open: the client's side stays open after the server's FIN, as a client
 * that ignores the answer would. Resolves once the server has closed, or after 15 s.
 */
function stalledRequest(port: number, head: string, start: string, trickle: boolean): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    const finish = (closedByServer: boolean) => {
      clearInterval(ticker);
      clearTimeout(limit);
      socket.destroy();
      resolve({ received, closedByServer });
    };
    const ticker = setInterval(() => {
      if (trickle && socket.writable) socket.write(' ');
    }, 100);
    // Well past the timeout plus the server's grace: a server that never closes fails the test here.
    const limit = setTimeout(() => finish(false), 15_000);
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('end', () => {
      if (!trickle) finish(true);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(head + start);
  });
}

const responses = (raw: string) => raw.match(/HTTP\/1\.1 \d{3}/g) ?? [];

function expectTimeoutAnswer(exchange: Exchange) {
  expect(exchange.closedByServer).toBe(true);
  expect(responses(exchange.received)).toEqual(['HTTP/1.1 408']);
  const body = exchange.received.slice(exchange.received.indexOf('\r\n\r\n') + 4);
  expect(JSON.parse(body)).toEqual({ error: true, message: 'Request Timeout', code: 408 });
}

const post = (path: string, type: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe('a request body that never arrives whole', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  let qaPort: number;
  let verifyPort: number;
  let key: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({ HTTP_REQUEST_TIMEOUT_MS: '1500', RATE_LIMIT_ENABLED: 'false' });
    ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
    await qa.listen({ host: '127.0.0.1', port: 0 });
    await verify.listen({ host: '127.0.0.1', port: 0 });
    qaPort = (qa.server.address() as net.AddressInfo).port;
    verifyPort = (verify.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await qa?.close();
    await verify?.close();
    await runtime?.close();
  });

  it('is a 408 with the error body on the Q&A service, silent or trickling', async () => {
    const [silent, trickling] = await Promise.all([
      stalledRequest(qaPort, post('/api/questions', 'application/json', 1000), '{"title":', false),
      stalledRequest(qaPort, post('/api/questions', 'application/json', 100_000), '{"title":', true),
    ]);
    expectTimeoutAnswer(silent);
    expectTimeoutAnswer(trickling);
  });

  it('is a 408 on the verification service: /verify, a JSON list, and a list upload whose transaction ends', async () => {
    const auth = `X-API-Key: ${key}\r\n`;
    const [single, jsonList, csv] = await Promise.all([
      stalledRequest(verifyPort, post('/verify', 'application/json', 1000, auth), '{"email":', true),
      stalledRequest(verifyPort, post('/lists', 'application/json', 100_000, auth), '{"emails":[', true),
      // A CSV upload that trickles bytes (so its 15 s idle limit never fires) and keeps sending after the 408.
      stalledRequest(
        verifyPort,
        post('/lists', 'text/csv', 1_000_000, auth),
        'email\na@example.test\n',
        true,
      ),
    ]);
    expectTimeoutAnswer(single);
    expectTimeoutAnswer(jsonList);
    expectTimeoutAnswer(csv);
    // The upload's rows were written inside a transaction: it is rolled back once the connection is gone (the
    // test's own timeout bounds the wait).
    for (;;) {
      const [row] = await runtime.database.query<{ open: number; lists: number }>(
        sql`SELECT (SELECT count(*)::int FROM pg_stat_activity
                    WHERE datname = current_database() AND state LIKE 'idle in transaction%') AS open,
                   (SELECT count(*)::int FROM verification_lists) AS lists`,
      );
      expect(row!.lists).toBe(0);
      if (row!.open === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it('is not sent after an answer given before the body (a 401 whose body is being drained)', async () => {
    const exchange = await stalledRequest(verifyPort, post('/verify', 'application/json', 1000), '{', false);
    expect(exchange.closedByServer).toBe(true);
    expect(responses(exchange.received)).toEqual(['HTTP/1.1 401']);
  });
});
