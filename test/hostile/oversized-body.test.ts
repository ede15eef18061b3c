import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { settingsRepository } from '../../shared/db/repositories/settings.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import { postChunked } from './support.js';

// Class 5 of issue 16: a 20 MB chunked body without Content-Length is answered 413 with the error body, and a
// client that writes its whole upload before reading gets that answer instead of a reset connection.

const TWENTY_MB = 20 * 2 ** 20;

describe('oversized chunked bodies', () => {
  let runtime: TestRuntime;
  let qa: Awaited<ReturnType<typeof buildQaApp>>;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  let qaPort: number;
  let verifyPort: number;
  let key: string;

  beforeAll(async () => {
    runtime = await createTestRuntime({ RATE_LIMIT_ENABLED: 'false' });
    await settingsRepository(runtime.database.db).set('ai_enabled', true);
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
    await qa.listen({ port: 0, host: '127.0.0.1' });
    await verify.listen({ port: 0, host: '127.0.0.1' });
    qaPort = (qa.server.address() as AddressInfo).port;
    verifyPort = (verify.server.address() as AddressInfo).port;
    key = (await createKeys(runtime, { verify: ['verify'] })).verify!;
  });
  afterAll(async () => {
    await qa.close();
    await verify.close();
    await runtime.close();
  });

  const cases: [string, () => number, string, () => Record<string, string>][] = [
    ['poll-vote.php', () => qaPort, '/api/poll-vote.php', () => ({})],
    ['ai.php', () => qaPort, '/api/ai.php', () => ({})],
    ['newsletter-subscribe.php', () => qaPort, '/api/newsletter-subscribe.php', () => ({})],
    ['/verify', () => verifyPort, '/verify', () => ({ 'x-api-key': key })],
  ];

  it.each(cases)('%s: 413 with the error body, the upload completed', async (_name, port, path, headers) => {
    const answer = await postChunked(port(), path, TWENTY_MB, headers());
    expect(answer.error).toBeUndefined();
    expect(answer.uploaded).toBe(true);
    expect(answer.head).toMatch(/^HTTP\/1\.1 413 /);
    const body = JSON.parse(answer.body);
    expect({ error: body.error, code: body.code, message: body.message }).toEqual({
      error: true,
      code: 413,
      message: expect.any(String),
    });
  });

  it('a refusal before the body is read (401 without a key) reaches the client too', async () => {
    const answer = await postChunked(verifyPort, '/verify', TWENTY_MB);
    expect(answer.error).toBeUndefined();
    expect(answer.uploaded).toBe(true);
    expect(answer.head).toMatch(/^HTTP\/1\.1 401 /);
    expect(JSON.parse(answer.body)).toEqual({ error: true, code: 401, message: expect.any(String) });
  });
});
