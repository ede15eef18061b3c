import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { openRuntime } from '../../shared/runtime.js';
import { databaseUrl, REDIS_URL } from '../support/postgres.js';

// `npm run admin -- keys list` is over before its Redis connection has finished its handshake: closing the runtime
// then made ioredis fail its ready check ("Stream isn't writeable and enableOfflineQueue options is false") and the
// runtime logged that as a warning, `redis connection error`, on about every other CLI command of the README.
describe('a runtime closed while its Redis connection is still connecting', () => {
  it('logs no redis connection error', async () => {
    const warnings: string[] = [];
    const logger = {
      warn: (obj: unknown, msg?: string) => warnings.push(`${msg ?? ''} ${JSON.stringify(obj)}`),
      info: () => {},
      error: () => {},
      debug: () => {},
      child: () => logger,
    } as unknown as Logger;
    const config = loadConfig({
      DATABASE_URL: databaseUrl('postgres'),
      REDIS_URL,
      QUEUE_PREFIX: '{agora-test-runtime-close}',
      NODE_ENV: 'test',
    });
    let closedBeforeReady = 0;
    for (let i = 0; i < 10; i++) {
      const runtime = await openRuntime(config, logger, REDIS_URL, { migrate: false });
      // Closed once the TCP connection is up and the handshake (CLIENT SETINFO, then the INFO ready check) runs.
      if (runtime.redis.status === 'connecting')
        await new Promise((resolve) => runtime.redis.once('connect', resolve));
      if (runtime.redis.status !== 'ready') closedBeforeReady++;
      await runtime.close();
    }
    // Let ioredis settle what the disconnects left pending.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(closedBeforeReady).toBeGreaterThan(0);
    expect(warnings).toEqual([]);
  });
});
