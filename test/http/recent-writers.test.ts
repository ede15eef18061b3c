import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../shared/redis.js';
import { recentWriters } from '../../services/http/recent-writers.js';
import { freePort } from '../support/ports.js';
import { REDIS_URL } from '../support/postgres.js';
import { deleteKeys } from '../support/runtime.js';

describe('recent writers (read-your-writes)', () => {
  const prefix = `{agora-writers-${process.pid}}`;
  const redis = connectRedis(REDIS_URL, 'producer');
  // A producer connection refuses commands until it is connected (no offline queue), as in a running service.
  const connected = (client: typeof redis) =>
    client.status === 'ready' ? Promise.resolve() : new Promise((resolve) => client.once('ready', resolve));
  afterAll(async () => {
    redis.disconnect();
    await deleteKeys(`${prefix}*`);
  });

  it('knows a key that wrote within the window, in Redis, for every process', async () => {
    await connected(redis);
    const writers = recentWriters(redis, prefix, 60_000);
    await writers.wrote(7);
    expect(await writers.mayHaveWritten(7)).toBe(true);
    expect(await writers.mayHaveWritten(8)).toBe(false);
    // Another process (its own connection) sees the same.
    const other = connectRedis(REDIS_URL, 'producer');
    try {
      await connected(other);
      expect(await recentWriters(other, prefix, 60_000).mayHaveWritten(7)).toBe(true);
    } finally {
      other.disconnect();
    }
    expect(await redis.pttl(`${prefix}:db:wrote:7`)).toBeGreaterThan(0);
  });

  it('says "may have written" when Redis cannot answer, so the read goes to the primary', async () => {
    const away = connectRedis(`redis://127.0.0.1:${await freePort()}`, 'producer');
    away.on('error', () => {});
    try {
      const writers = recentWriters(away, prefix, 60_000);
      expect(await writers.mayHaveWritten(8)).toBe(true);
      await expect(writers.wrote(8)).rejects.toThrow();
    } finally {
      away.disconnect();
    }
  });
});
