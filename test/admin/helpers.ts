import type { LightMyRequestResponse } from 'fastify';
import { CookieJar as Jar, csrfOf } from '../support/cookies.js';

export { Jar, csrfOf };

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** The one-time id of the key creation form (a resubmitted form must not mint a second key). */
export const onceOf = (html: string): string => {
  const match = /name="_once"\s+value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no _once field');
  return match[1]!;
};

export const form = (fields: Record<string, string | string[]>): string => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) params.append(k, item);
  return params.toString();
};

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

interface Injectable {
  inject(options: {
    method: string;
    url: string;
    headers?: Record<string, string>;
    payload?: string;
  }): Promise<LightMyRequestResponse>;
}

/** Signs in through the login form; returns the jar holding the session and a CSRF token of that session. */
export async function signIn(app: Injectable, token = ADMIN_TOKEN): Promise<{ jar: Jar; csrf: string }> {
  const jar = new Jar();
  const loginPage = await app.inject({ method: 'GET', url: '/admin/login' });
  jar.take(loginPage);
  const login = await app.inject({
    method: 'POST',
    url: '/admin/login',
    headers: { ...FORM, ...jar.header },
    payload: form({ token, _csrf: csrfOf(loginPage.body) }),
  });
  if (login.statusCode !== 303)
    throw new Error(`login answered ${login.statusCode}: ${login.body.slice(0, 300)}`);
  jar.take(login);
  const home = await app.inject({ method: 'GET', url: '/admin', headers: jar.header });
  return { jar, csrf: csrfOf(home.body) };
}
