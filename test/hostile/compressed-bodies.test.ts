import { deflateSync, gzipSync } from 'node:zlib';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildVerifyApp } from '../../services/verify/app.js';
import { MAX_INFLATION } from '../../services/http/inflation-guard.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import type { VerifyApp } from '../lists/helpers.js';

// A compressed body is read through its decompression, and the route's limit bounds what it expands to. A "zip bomb"
// of a few dozen KB would still cost the service the inflation and the parsing of the whole limit (64 MiB for a
// list); an expansion past MAX_INFLATION is refused early, over a real socket, with the error body.

describe('a compressed request body', () => {
  let runtime: TestRuntime;
  let app: VerifyApp;
  let key: string;
  let base: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    app = await buildVerifyApp(runtime);
    key = (await createKeys(runtime, { verify: ['verify'] })).verify!;
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  const post = (body: Buffer, type = 'text/plain', encoding = 'gzip') =>
    fetch(`${base}/lists`, {
      method: 'POST',
      headers: { 'content-type': type, 'content-encoding': encoding, 'x-api-key': key },
      body,
      signal: AbortSignal.timeout(30_000),
    });
  const listCount = async () =>
    (await runtime.database.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM verification_lists`))[0]!
      .n;

  const refusal = {
    error: true,
    message: `A compressed request body may expand at most ${MAX_INFLATION} times over`,
    code: 413,
  };

  it(`that expands more than ${MAX_INFLATION} times over is a 413, and nothing is stored: an upload`, async () => {
    // 36 MB of one repeated line: under VERIFY_LIST_MAX_BYTES, a thousand times its compressed size.
    const bomb = gzipSync(Buffer.from('bomb@example.test\n'.repeat(2_000_000)));
    expect(bomb.length).toBeLessThan(100_000);
    const res = await post(bomb);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(refusal);
    expect(await listCount()).toBe(0);
  });

  it('the same for a JSON body, which is read whole before it is parsed', async () => {
    const bomb = deflateSync(Buffer.from(`{"emails": ["${'a'.repeat(30_000_000)}"]}`));
    const res = await post(bomb, 'application/json', 'deflate');
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(refusal);
    expect(await listCount()).toBe(0);
  });

  it('that expands as lists of addresses do is read whole', async () => {
    const lines = Array.from(
      { length: 60_000 },
      (_, i) => `user${(i * 7919) % 100_003}.${i}@example${i % 97}.test`,
    );
    const body = gzipSync(Buffer.from(`${lines.join('\n')}\n`));
    const res = await post(body);
    expect(res.status, await res.clone().text()).toBe(202);
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({ total: 60_000 });
  });
});
