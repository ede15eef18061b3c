import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectRedis, duplicateConnection, type RedisClient } from '../../shared/redis.js';
import { freePort } from '../support/ports.js';
import { startRedis } from '../support/redis-server.js';

// The second connections (rate limits, the verifier, blocking readers) had no error listener: while Redis was
// away, ioredis printed each failed reconnection as an unstructured "[ioredis] Unhandled error event" line in the
// middle of the services' JSON logs. Their failures are reported by the commands that fail on them.
describe('a duplicated Redis connection whose server goes away', () => {
  let server: ChildProcess | undefined;
  const clients: RedisClient[] = [];
  afterAll(() => {
    for (const client of clients) client.disconnect();
    server?.kill('SIGKILL');
  });

  it('reconnects quietly, without an unhandled error event', async () => {
    const port = await freePort();
    server = await startRedis(port);
    const main = connectRedis(`redis://127.0.0.1:${port}`, 'producer');
    main.on('error', () => {});
    const copy = duplicateConnection(main);
    clients.push(main, copy);
    for (const client of clients)
      if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
    expect(await copy.ping()).toBe('PONG');
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      server.kill('SIGKILL');
      await sleep(1500); // a few reconnection attempts (200 ms, 400 ms, ...)
      expect(copy.status).not.toBe('ready');
      const lines = printed.mock.calls.map((args) => args.map(String).join(' '));
      expect(lines.filter((line) => line.includes('Unhandled error event'))).toEqual([]);
    } finally {
      printed.mockRestore();
    }
  });
});
