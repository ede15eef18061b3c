import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../shared/access/admin.js';
import { usersRepository } from '../../shared/db/repositories/users.js';
import { errorSerializer, redactUrlTokens } from '../../shared/log-serializers.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { freePort } from '../support/ports.js';
import { http } from './helpers.js';
import { startProcess, type RunningProcess } from '../support/processes.js';

/**
 * Issue 23, findings 7, 8, 10 and 11, against one real process running every role (both services and the
 * workers) with SMTP_URL unset and a METRICS_TOKEN: what its logs hold, and what each port exposes.
 */

const METRICS_TOKEN = 'security-suite-metrics-token-0123456789abcdef';

describe('log redaction', () => {
  it('replaces the value of token-like query parameters, and keeps the rest of the URL', () => {
    expect(redactUrlTokens('/api/newsletter/confirm?token=abc.def')).toBe(
      '/api/newsletter/confirm?token=[redacted]',
    );
    expect(redactUrlTokens('/x?page=2&api_key=k1&access_token=t&sig=s&q=token')).toBe(
      '/x?page=2&api_key=[redacted]&access_token=[redacted]&sig=[redacted]&q=token',
    );
    expect(redactUrlTokens('/x?%74oken=abc')).toBe('/x?%74oken=[redacted]');
    expect(redactUrlTokens('/api/questions')).toBe('/api/questions');
  });

  it('logs a failed query of the real database without its SQL or parameters', async () => {
    const runtime = await createTestRuntime();
    try {
      let failure: unknown;
      try {
        await runtime.database.db.execute(sql`SELECT ${'secret-parameter\u0000'}::text AS value`);
      } catch (err) {
        failure = err;
      }
      expect(failure).toBeInstanceOf(Error);
      // The raw error does carry both, which is what used to be logged at error level.
      expect(String((failure as Error).message) + JSON.stringify(failure)).toMatch(/SELECT|secret-parameter/);
      const logged = JSON.stringify(errorSerializer(failure));
      expect(logged).not.toContain('secret-parameter');
      expect(logged).not.toMatch(/select \$1|SELECT \$1/i);
      expect(logged).toMatch(/SQL and parameters are not logged|invalid byte sequence|0x00/);
    } finally {
      await runtime.close();
    }
  }, 60_000);
});

describe('one process, every role', { timeout: 180_000 }, () => {
  let runtime: TestRuntime;
  let agora: RunningProcess;
  let qa: string;
  let verify: string;
  let verifyKey: string;
  let adminKey: string;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    const [qaPort, verifyPort] = [await freePort(), await freePort()];
    qa = `http://127.0.0.1:${qaPort}`;
    verify = `http://127.0.0.1:${verifyPort}`;
    agora = startProcess('bin/start.ts', ['--role', 'all'], {
      ...runtime.env,
      HOST: '127.0.0.1',
      QA_PORT: String(qaPort),
      VERIFY_PORT: String(verifyPort),
      SMTP_URL: '',
      METRICS_TOKEN,
      PUBLIC_URL: 'http://agora.test',
    });
    await agora.waitFor(
      /Server listening.*Server listening|Server listening[\s\S]*Server listening/,
      120_000,
    );
    await usersRepository(runtime.database.db).create({ username: 'sec-operator' });
    const make = async (scopes: ('verify' | 'admin' | 'qa:write')[]) =>
      (await createApiKey(runtime.database.db, { username: 'sec-operator', plan: 'authenticated', scopes }))
        .key;
    verifyKey = await make(['verify']);
    adminKey = await make(['admin', 'qa:write']);
  }, 150_000);

  afterAll(async () => {
    await agora?.stop();
    await runtime?.close();
  });

  it('logs a mail it cannot send by recipient and subject, never its links', async () => {
    const res = await http(`${qa}/api/newsletter-subscribe.php`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'reader@example.test', action: 'subscribe' }),
    });
    expect(res.status).toBe(200);
    await agora.waitFor(/mail not sent/, 60_000);
    const line = agora
      .output()
      .split('\n')
      .find((l) => l.includes('mail not sent'))!;
    expect(line).toContain('reader@example.test');
    expect(line).toContain('Confirm your weekly Agora digest');
    expect(agora.output()).not.toMatch(/newsletter\/(confirm|unsubscribe)\?token=(?!\[redacted\])/);
  });

  it('keeps link tokens out of request logs', async () => {
    const res = await http(`${qa}/api/newsletter/unsubscribe?token=eyJub3QiOiJyZWFsIn0.SECRETVALUE42`);
    expect(res.status).toBe(400);
    // The child's request log line may reach us after the response does.
    await agora.waitFor(/"url":"\/api\/newsletter\/unsubscribe\?token=/, 30_000);
    const out = agora.output();
    expect(out).not.toContain('SECRETVALUE42');
    expect(out).toContain('/api/newsletter/unsubscribe?token=[redacted]');
  });

  it('keeps SQL and parameters out of the log when a post carries a NUL byte', async () => {
    const res = await http(`${qa}/api/questions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({
        title: 'A question with a NUL byte inside',
        content: 'NULMARKER-7f3a\u0000 and enough text after it to pass the length rule.',
        tags: ['security'],
      }),
    });
    // Answered, whatever the status (the hostile-input work turns it into a 400): the log is what is checked,
    // once the request's last line ("request completed") is out.
    const id = res.headers.get('x-request-id')!;
    await agora.waitFor(new RegExp(`"reqId":"${id}"[^\\n]*request completed`), 30_000);
    const out = agora.output();
    expect(out).toContain(id);
    expect(out).not.toContain('NULMARKER-7f3a');
    expect(out).not.toMatch(/insert into "questions"/i);
  });

  it('sends the Q&A service’s security headers from the verification service too', async () => {
    const res = await http(`${verify}/health`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
  });

  it('serves /metrics on the API ports only with the METRICS_TOKEN', async () => {
    for (const base of [qa, verify]) {
      expect((await http(`${base}/metrics`)).status).toBe(401);
      expect((await http(`${base}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(
        401,
      );
      const ok = await http(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('# HELP');
    }
  });

  it('makes /verify/self-check an operator tool: 403 for a plain verify key', async () => {
    const url = `${verify}/verify/self-check?host=127.0.0.1`;
    const plain = await http(url, { headers: { 'x-api-key': verifyKey } });
    expect(plain.status).toBe(403);
    expect(await plain.json()).toMatchObject({ error: true, code: 403 });
    const operator = await http(url, { headers: { 'x-api-key': adminKey } });
    expect(operator.status).toBe(200);
    expect(((await operator.json()) as { data: { outbound_smtp: string } }).data.outbound_smtp).toBe(
      'private_address',
    );
  });
});
