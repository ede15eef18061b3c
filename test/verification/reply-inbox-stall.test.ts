import { afterAll, describe, expect, it } from 'vitest';
import { createReplyInbox, sendReplies, type ReplyInbox } from '../../shared/verification/host-replies.js';
import { connectRedis, type RedisClient } from '../../shared/redis.js';
import { REDIS_URL } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

// A requester's reply inbox whose Redis connection goes silent (a node or a path gone without a reset: nothing
// answers, nothing closes): its blocking read must not wait for TCP to give up. The real Redis sits behind a
// loopback proxy; once the test freezes the connections open at that moment, they swallow everything both ways.
// Connections opened later work.

describe('a reply inbox whose connection goes silent', { timeout: 60_000 }, () => {
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let viaProxy: RedisClient;
  let direct: RedisClient;
  let inbox: ReplyInbox;
  let frozen = false;

  afterAll(async () => {
    frozen = false; // the old connections talk again, so that closing does not wait on them
    await inbox?.close();
    viaProxy?.disconnect();
    direct?.disconnect();
    await proxy?.close();
  });

  it('reads again on a new connection and receives the replies sent meanwhile', async () => {
    proxy = await startTcpProxy(new URL(REDIS_URL), () => {
      // Only the connections already open when the test freezes them go silent.
      const openedAfterFreeze = frozen;
      const silent = () => frozen && !openedAfterFreeze;
      return {
        fromClient: (chunk, toUpstream) => void (silent() || toUpstream(chunk)),
        fromUpstream: (chunk, toClient) => void (silent() || toClient(chunk)),
      };
    });
    viaProxy = connectRedis(`redis://127.0.0.1:${proxy.port}`, 'worker');
    direct = connectRedis(REDIS_URL, 'worker');
    inbox = createReplyInbox(viaProxy, `test:reply-inbox-stall:${process.pid}:${Date.now()}:`);

    // The inbox works through the proxy.
    const [first] = inbox.expect(['t-1']);
    await sendReplies(direct, [{ replyTo: inbox.address, ticket: 't-1', reply: cached('one') }], 60_000);
    expect(await first).toMatchObject({ kind: 'cached' });

    frozen = true;
    const [second] = inbox.expect(['t-2']);
    await sendReplies(direct, [{ replyTo: inbox.address, ticket: 't-2', reply: cached('two') }], 60_000);
    // Without a bound on the read, this waits for the test's timeout.
    expect(await second).toMatchObject({ kind: 'cached', result: { email: 'two@example.test' } });
  });
});

function cached(name: string) {
  return {
    kind: 'cached' as const,
    result: { email: `${name}@example.test` } as never,
  };
}
