import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../../shared/logger.js';
import { startProcess } from '../support/processes.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';

describe('logs keep secrets out', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  beforeAll(async () => {
    runtime = await createTestRuntime();
  });
  afterAll(() => runtime.close());

  it('masks the password of a connection URL', () => {
    expect(redactUrl('redis://:s3cret@redis.internal:6379/0')).toBe('redis://:***@redis.internal:6379/0');
    expect(redactUrl('postgres://agora:pw@db/agora')).toBe('postgres://agora:***@db/agora');
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactUrl('not a url')).toBe('(unparseable URL)');
  });

  it('does not print the Redis password when a service starts', async () => {
    // The local Redis has no password: ioredis warns and carries on, so the process starts normally.
    const service = startProcess('bin/start.ts', ['--role', 'verify'], {
      ...runtime.env,
      REDIS_URL: 'redis://:s3cret-pass@127.0.0.1:6379',
      HOST: '127.0.0.1',
      VERIFY_PORT: '0',
    });
    try {
      await service.waitFor(/runtime ready/);
      expect(service.output()).toContain('"redis":"redis://:***@127.0.0.1:6379"');
      expect(service.output()).not.toContain('s3cret-pass');
    } finally {
      await service.stop();
    }
  });
});
