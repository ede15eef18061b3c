import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQaApp } from '../../services/qa/app.js';
import { buildVerifyApp } from '../../services/verify/app.js';
import { ADMIN_TOKEN, form, FORM, signIn } from '../admin/helpers.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { createKeys } from '../verify-service/helpers.js';
import { get, jsonList, type VerifyApp } from './helpers.js';

// The admin panel's Lists page: every owner's lists with their progress, names escaped, and a cancel button that
// needs the session's CSRF token.

let runtime: TestRuntime;
let admin: Awaited<ReturnType<typeof buildQaApp>>;
let verify: VerifyApp;
let key: string;

beforeAll(async () => {
  runtime = await createTestRuntime({ ADMIN_TOKEN, RATE_LIMIT_ENABLED: 'false' });
  admin = await buildQaApp(runtime);
  verify = await buildVerifyApp(runtime);
  ({ verify: key } = (await createKeys(runtime, { verify: ['verify'] })) as { verify: string });
});

afterAll(async () => {
  await admin?.close();
  await verify?.close();
  await runtime?.close();
});

describe('admin Lists page', () => {
  it('shows lists with escaped names and cancels one with the CSRF token', async () => {
    const created = await jsonList(verify, key, {
      emails: ['a@example.test', 'b@example.test', 'a@example.test'],
      name: '<script>alert(1)</script>',
    });
    const { id } = created.json().data;
    const { jar, csrf } = await signIn(admin);

    const page = await admin.inject({ method: 'GET', url: '/admin/lists', headers: jar.header });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(id);
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).toMatch(/<progress max="100" value="0"/);
    expect(page.body).toContain(`action="/admin/lists/${id}/cancel"`);

    const cancel = (fields: Record<string, string>) =>
      admin.inject({
        method: 'POST',
        url: `/admin/lists/${id}/cancel`,
        headers: { ...FORM, ...jar.header },
        payload: form(fields),
      });
    expect((await cancel({})).statusCode).toBe(403);
    expect((await get(verify, key, `/lists/${id}`)).json().data.status).toBe('queued');

    const done = await cancel({ _csrf: csrf });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain(`List ${id} cancelled`);
    expect(done.body).not.toContain(`action="/admin/lists/${id}/cancel"`);
    expect((await get(verify, key, `/lists/${id}`)).json().data.status).toBe('cancelled');
    expect((await cancel({ _csrf: csrf })).statusCode).toBe(404);
  });
});
