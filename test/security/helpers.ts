import { startProcess, type RunningProcess } from '../support/processes.js';
import { freePort } from '../support/ports.js';
import { CookieJar, csrfOf } from '../support/cookies.js';

/**
 * The security suite talks to real processes over real HTTP: `bin/start.ts` started as a child with the
 * environment under test, and fetch() against its port, so what is checked is what a client on the network
 * gets (headers, cookies, status codes), not what app.inject() would see.
 */

export const ADMIN_TOKEN = 'security-suite-admin-token-0123456789abcdef';
export const APP_SECRET = 'security-suite-app-secret-0123456789abcdef0123';

export interface Service {
  process: RunningProcess;
  /** http://host:port of the service, e.g. http://[::1]:41234 */
  base: string;
  stop(): Promise<void>;
}

/** Starts one role of bin/start.ts on a free port of `host` and waits until it listens. */
export async function startService(
  role: 'qa' | 'verify' | 'all',
  env: Record<string, string>,
  host = '127.0.0.1',
): Promise<Service> {
  const port = await freePort(host);
  const process = startProcess('bin/start.ts', ['--role', role], {
    ...env,
    HOST: host,
    [role === 'verify' ? 'VERIFY_PORT' : 'QA_PORT']: String(port),
    ...(role === 'all' ? { VERIFY_PORT: String(await freePort(host)) } : {}),
  });
  await process.waitFor(/Server listening/, 90_000);
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { process, base, stop: async () => void (await process.stop('SIGTERM')) };
}

export const http = (url: string, init: RequestInit = {}) =>
  fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(15_000), ...init });

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
export const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** The login form's CSRF token and the pre-login cookie it is bound to. */
export async function loginForm(base: string): Promise<{ jar: CookieJar; csrf: string }> {
  const jar = new CookieJar();
  const page = await http(`${base}/admin/login`);
  jar.take(page);
  return { jar, csrf: csrfOf(await page.text()) };
}

/** Signs in through the login form; returns the browser's jar and a CSRF token of its session. */
export async function signIn(base: string, token = ADMIN_TOKEN): Promise<{ jar: CookieJar; csrf: string }> {
  const { jar, csrf } = await loginForm(base);
  const login = await http(`${base}/admin/login`, {
    method: 'POST',
    headers: { ...FORM, ...jar.header },
    body: form({ token, _csrf: csrf }),
  });
  if (login.status !== 303)
    throw new Error(`login answered ${login.status}: ${(await login.text()).slice(0, 300)}`);
  jar.take(login);
  const home = await http(`${base}/admin`, { headers: jar.header });
  if (home.status !== 200) throw new Error(`/admin answered ${home.status} after login`);
  return { jar, csrf: csrfOf(await home.text()) };
}
