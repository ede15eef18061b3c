import { afterAll, describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../../shared/errors.js';
import { createQueues, type Queues } from '../../shared/queues/producer.js';
import { connectRedis, type RedisClient } from '../../shared/redis.js';
import { freePort } from '../support/ports.js';

// A request that enqueues a job and waits for it (bulk verification, the AI endpoint) while Redis is unreachable
// answers 503 by its deadline. The first wait on a queue starts the process's listener for that queue's events, and
// that start waits for Redis: it used to hold the request for as long as Redis stayed away.

describe('the first wait on a queue while Redis is unreachable', () => {
  let connection: RedisClient;
  let queues: Queues;

  afterAll(async () => {
    await queues?.close();
    connection?.disconnect();
  });

  it('fails with 503 at its deadline instead of waiting for Redis', async () => {
    // Nothing listens on this port: every connection attempt is refused, and the client keeps retrying.
    connection = connectRedis(`redis://127.0.0.1:${await freePort()}`, 'producer');
    connection.on('error', () => {});
    queues = createQueues(connection, '{agora-test-first-wait}');
    const waited = queues.enqueueAndWait('ping', 'echo', { message: 'hello' }, 1000);
    // The test's own timeout is what a wait for Redis would meet.
    await expect(waited).rejects.toBeInstanceOf(ServiceUnavailableError);
  }, 20_000);
});
