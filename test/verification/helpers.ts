import { Redis } from 'ioredis';
import type { VerifierOptions } from '../../shared/verification/types.js';

/**
 * Shared setup of the verification tests: a real Redis with a key prefix unique to the test
 * file and process, deleted afterwards, and verifier options with tight deadlines.
 */

export interface TestRedis {
  redis: Redis;
  prefix: string;
  cleanup(): Promise<void>;
}

export function testRedis(name: string): TestRedis {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const prefix = `test:verification:${name}:${process.pid}:${Date.now()}:`;
  return {
    redis,
    prefix,
    async cleanup() {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  };
}

/** A fresh sub-prefix, so one test's cache (DNS answers, catch-all) cannot leak into another. */
let counter = 0;
export function freshPrefix(base: string): string {
  counter += 1;
  return `${base}${counter}:`;
}

export function verifierOptions(
  overrides: Partial<VerifierOptions> &
    Pick<VerifierOptions, 'redis' | 'keyPrefix' | 'dnsServers' | 'smtpPort'>,
): VerifierOptions {
  return {
    dnsTimeoutMs: 500,
    dnsTries: 1,
    allowPrivateMx: true,
    heloName: 'verifier.agora.test',
    mailFrom: 'probe@agora.test',
    smtpTimeoutMs: 800,
    probeTimeoutMs: 5000,
    maxRcptPerSession: 20,
    mxConcurrency: 2,
    // Pacing would only slow the suite here.
    mxPacingMs: 0,
    ...overrides,
  };
}

/** Options of a verifier in a test's world: the file's Redis under a fresh sub-prefix, its DNS server and SMTP port. */
export function worldOptions(
  store: TestRedis,
  dnsEndpoint: string,
  smtpPort: number,
  extra: Partial<VerifierOptions> = {},
): VerifierOptions {
  return verifierOptions({
    redis: store.redis,
    keyPrefix: freshPrefix(store.prefix),
    dnsServers: [dnsEndpoint],
    smtpPort,
    ...extra,
  });
}
