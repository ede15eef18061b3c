import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { loadConfig } from '../../shared/config.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { addQuestion, addTag, addUser } from '../qa-read/fixtures.js';

type App = Awaited<ReturnType<typeof buildQaApp>>;

describe('HTTP conveniences: compression, CORS, 405, WWW-Authenticate, readable validation errors, load shedding', () => {
  let runtime: TestRuntime;
  let qa: App;
  let verify: Awaited<ReturnType<typeof buildVerifyApp>>;
  const others: { close(): Promise<unknown> }[] = [];

  beforeAll(async () => {
    // Defaults throughout, rate limits included (this file stays well inside the anonymous hourly budget).
    runtime = await createTestRuntime();
    const db = runtime.database.db;
    const user = await addUser(db, { username: 'conveniences' });
    const tag = await addTag(db, 'compression');
    for (let i = 0; i < 40; i++) {
      await addQuestion(db, {
        authorId: user.id,
        title: `How well does question number ${i} compress?`,
        content: 'The same words again and again compress very well. '.repeat(4),
        tagIds: [tag.id],
      });
    }
    qa = await buildQaApp(runtime);
    verify = await buildVerifyApp(runtime);
  });
  afterAll(async () => {
    await qa.close();
    await verify.close();
    for (const app of others) await app.close();
    await runtime.close();
  });

  it('compresses large answers with gzip or brotli when asked, keeping the same ETag', async () => {
    const url = '/api/questions?limit=100';
    const plain = await qa.inject({ url, headers: { 'accept-encoding': 'identity' } });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(10_000);

    const gzip = await qa.inject({ url, headers: { 'accept-encoding': 'gzip' } });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
    expect(JSON.parse(gunzipSync(gzip.rawPayload).toString())).toEqual(plain.json());
    expect(gzip.headers.vary).toMatch(/accept-encoding/i);

    const br = await qa.inject({ url, headers: { 'accept-encoding': 'br, gzip' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString())).toEqual(plain.json());
    // A weak ETag names the content, whatever its encoding: a 304 still works for a compressing client.
    expect(br.headers.etag).toBe(plain.headers.etag);
    const again = await qa.inject({
      url,
      headers: { 'accept-encoding': 'gzip', 'if-none-match': plain.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);

    // Small answers are not worth it.
    const small = await qa.inject({ url: '/api/categories', headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('allows cross-origin public reads (and their preflight, uncharged), but not writes or the panel', async () => {
    const origin = 'https://reader.example';
    const read = await qa.inject({ url: '/api/questions', headers: { origin } });
    expect(read.headers['access-control-allow-origin']).toBe('*');
    expect(read.headers['access-control-expose-headers']).toMatch(/ETag/);
    expect(read.headers['access-control-expose-headers']).toMatch(/X-RateLimit-Remaining/);

    const preflight = await qa.inject({
      method: 'OPTIONS',
      url: '/api/questions',
      headers: {
        origin,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-methods']).toMatch(/GET/);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(preflight.headers['x-ratelimit-remaining']).toBeUndefined();

    const write = await qa.inject({
      method: 'POST',
      url: '/api/questions',
      headers: { origin },
      payload: {},
    });
    expect(write.headers['access-control-allow-origin']).toBeUndefined();
    const writePreflight = await qa.inject({
      method: 'OPTIONS',
      url: '/api/questions',
      headers: { origin, 'access-control-request-method': 'POST' },
    });
    expect(writePreflight.headers['access-control-allow-origin']).toBeUndefined();
    const panel = await qa.inject({ url: '/admin', headers: { origin } });
    expect(panel.headers['access-control-allow-origin']).toBeUndefined();
    // The verification service wants a key on every call: no CORS at all.
    const verifyRead = await verify.inject({
      method: 'POST',
      url: '/verify',
      headers: { origin },
      payload: {},
    });
    expect(verifyRead.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('limits CORS to the configured origins', async () => {
    const configured = (CORS_ORIGINS: string) => loadConfig({ ...runtime.env, CORS_ORIGINS });
    expect(() => configured('ftp://files.example')).toThrow(/CORS_ORIGINS/);
    expect(loadConfig(runtime.env).corsOrigins).toEqual(['*']);
    const app = await buildQaApp({ ...runtime, config: configured('https://allowed.example') });
    others.push(app);
    const allowed = await app.inject({
      url: '/api/categories',
      headers: { origin: 'https://allowed.example' },
    });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://allowed.example');
    expect(allowed.headers.vary).toMatch(/origin/i);
    const other = await app.inject({ url: '/api/categories', headers: { origin: 'https://other.example' } });
    expect(other.statusCode).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();

    const none = await buildQaApp({ ...runtime, config: configured('') });
    others.push(none);
    const plain = await none.inject({
      url: '/api/categories',
      headers: { origin: 'https://allowed.example' },
    });
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers 405 with Allow for a known path and a wrong method, 404 for an unknown path', async () => {
    const put = await qa.inject({ method: 'PUT', url: '/api/questions?page=2' });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD, POST');
    expect(put.json()).toEqual({
      error: true,
      code: 405,
      message: 'PUT is not allowed on /api/questions; allowed: GET, HEAD, POST',
    });
    const del = await qa.inject({ method: 'DELETE', url: '/api/questions/some-slug/answers' });
    expect(del.statusCode).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD, POST');
    const categories = await qa.inject({ method: 'POST', url: '/api/categories/' });
    expect(categories.statusCode).toBe(405);
    expect(categories.headers.allow).toBe('GET, HEAD');

    const get = await verify.inject({ method: 'GET', url: '/verify' });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');

    const unknown = await qa.inject({ method: 'PUT', url: '/api/nothing-here' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.allow).toBeUndefined();

    // OPTIONS that is not a preflight CORS answers (CORS's `*` route matched it) is a wrong method too, as on
    // the verification service; a public read's preflight is still CORS's 204.
    const origin = { origin: 'https://reader.example' };
    for (const headers of [{}, origin, { ...origin, 'access-control-request-method': 'POST' }]) {
      const options = await qa.inject({ method: 'OPTIONS', url: '/api/questions/12', headers });
      expect({ headers, status: options.statusCode, allow: options.headers.allow }).toEqual({
        headers,
        status: 405,
        allow: 'GET, HEAD, PATCH',
      });
      expect(options.json()).toMatchObject({ error: true, code: 405 });
    }
    const preflight = await qa.inject({
      method: 'OPTIONS',
      url: '/api/questions/12',
      headers: { ...origin, 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect((await qa.inject({ method: 'OPTIONS', url: '/api/nothing-here' })).statusCode).toBe(404);
    expect((await verify.inject({ method: 'OPTIONS', url: '/verify' })).statusCode).toBe(405);
  });

  it('challenges with WWW-Authenticate on every 401', async () => {
    const write = await qa.inject({ method: 'POST', url: '/api/questions', payload: {} });
    expect(write.statusCode).toBe(401);
    expect(write.headers['www-authenticate']).toBe('Bearer realm="agora"');
    const badKey = await qa.inject({ url: '/api/tags', headers: { authorization: 'Bearer not-a-key' } });
    expect(badKey.statusCode).toBe(401);
    expect(badKey.headers['www-authenticate']).toBe('Bearer realm="agora"');
    const verifyCall = await verify.inject({ method: 'POST', url: '/verify', payload: { email: 'a@b.c' } });
    expect(verifyCall.statusCode).toBe(401);
    expect(verifyCall.headers['www-authenticate']).toBe('X-API-Key realm="agora-verify"');
    const fine = await qa.inject('/api/tags');
    expect(fine.headers['www-authenticate']).toBeUndefined();
  });

  it('says which values an enum takes and which parameter is missing, without Ajv artefacts', async () => {
    const sort = await qa.inject('/api/questions?sort=bogus');
    expect(sort.statusCode).toBe(400);
    expect(sort.json().message).toBe(
      'Invalid query: Unknown sort "bogus": expected one of newest, votes, views, unanswered',
    );
    const missing = await qa.inject('/api/search');
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toMatch(/^Invalid query: q is required$/);
    const low = await qa.inject('/api/questions?limit=0');
    expect(low.json().message).toMatch(/^Invalid query: limit must be /);
    expect(low.json().message).not.toMatch(/querystring|must have required property|\s{2}/);
  });

  it('sheds load with 503 and Retry-After past the configured heap, still answering /health', async () => {
    const app = await buildQaApp({ ...runtime, config: { ...runtime.config, maxHeapUsedMb: 1 } });
    others.push(app);
    await app.ready();
    // The heap is sampled once a second; every heap is over 1 MB.
    const shed = await vi.waitFor(
      async () => {
        const res = await app.inject('/api/categories');
        expect(res.statusCode).toBe(503);
        return res;
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(shed.headers['retry-after']).toBe('10');
    expect(shed.json()).toEqual({
      error: true,
      code: 503,
      message: 'The service is overloaded; try again shortly',
    });
    expect((await app.inject('/health')).statusCode).toBe(200);
    // At the defaults nothing is shed.
    expect((await qa.inject('/api/categories')).statusCode).toBe(200);
  });
});
