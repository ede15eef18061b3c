import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: its headers (lower-case names) and its raw body. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * How the receiver answers its n-th request (0-based): a status (with headers), or 'hang' to hold the request
 * open without ever answering.
 */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: (path?: string) => string;
  port: number;
  received: Received[];
  /** Resolves when the receiver has got `count` requests. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP server on loopback that records what it is sent and answers as told. */
export async function startReceiver(
  answer: (index: number, request: Received) => Answer = () => ({ status: 200 }),
  host = '127.0.0.1',
): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      const index = received.push(request) - 1;
      for (const w of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const a = answer(index, request);
      if (a === 'hang') return;
      res.writeHead(a.status, a.headers).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path = '/hook') => `http://${host}:${port}${path}`,
    received,
    waitForRequests: (count) =>
      received.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
