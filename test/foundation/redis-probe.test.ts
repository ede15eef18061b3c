import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { redisAnswers } from '../../shared/redis.js';
import { freePort } from '../support/ports.js';
import { startRedis } from '../support/redis-server.js';

// Start-up asks whether a Redis answers at 127.0.0.1:6379 before starting its own. A stopped redis-server still
// accepts connections (the kernel completes them) but never answers: the probe must say no, not wait for ever.
describe('the start-up probe of a Redis', () => {
  let server: ChildProcess | undefined;
  afterAll(() => {
    server?.kill('SIGCONT');
    server?.kill('SIGKILL');
  });

  it('answers no for a server that accepts connections and never replies, yes once it replies again', async () => {
    const port = await freePort();
    server = await startRedis(port);
    const url = `redis://127.0.0.1:${port}`;
    expect(await redisAnswers(url)).toBe(true);
    server.kill('SIGSTOP');
    expect(await redisAnswers(url)).toBe(false);
    server.kill('SIGCONT');
    expect(await redisAnswers(url)).toBe(true);
  });

  it('answers no where nothing listens', async () => {
    expect(await redisAnswers(`redis://127.0.0.1:${await freePort()}`)).toBe(false);
  });
});
