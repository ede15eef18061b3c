import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { buildVerifyApp } from '../../services/verify/app.js';
import { mailDomain, startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startMailWorld, type MailWorld } from '../support/smtp-servers.js';

export type VerifyApp = Awaited<ReturnType<typeof buildVerifyApp>>;

export const MAIN = '127.0.6.2';
export const CATCH_ALL = '127.0.6.3';
export const TARPIT = '127.0.6.4';

/**
 * The loopback mail world of the list tests: example.test knows alice and carol and refuses bob, catchall.test takes
 * anything, tarpit.test never answers.
 */
export async function startListWorld(): Promise<{
  dns: DnsServer;
  world: MailWorld;
  close(): Promise<void>;
}> {
  const world = await startMailWorld({
    [MAIN]: {
      kind: 'smtp',
      mailboxes: { alice: 'accept', carol: 'accept', bob: '550 5.1.1 <bob@example.test>: User unknown' },
    },
    [CATCH_ALL]: { kind: 'smtp', others: 'accept' },
    // Accepts the connection and never says a word: its probes end only at the SMTP timeout.
    [TARPIT]: { kind: 'raw', greeting: null },
  });
  const dns = await startDnsServer({
    ...mailDomain('example.test', MAIN),
    ...mailDomain('catchall.test', CATCH_ALL),
    ...mailDomain('tarpit.test', TARPIT),
  });
  return {
    dns,
    world,
    async close() {
      await world.close();
      await dns.close();
    },
  };
}

export const jsonList = (app: VerifyApp, key: string, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/lists',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    payload: JSON.stringify(body),
  });

export const upload = (
  app: VerifyApp,
  key: string,
  payload: string | Buffer,
  {
    type = 'text/csv',
    query = '',
    headers = {},
  }: { type?: string; query?: string; headers?: Record<string, string> } = {},
) =>
  app.inject({
    method: 'POST',
    url: `/lists${query}`,
    headers: { 'content-type': type, 'x-api-key': key, ...headers },
    payload,
  });

export const get = (app: VerifyApp, key: string, url: string) =>
  app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

export function expectError(res: LightMyRequestResponse, code: number, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(code);
  const body = res.json();
  expect(body).toMatchObject({ error: true, code });
  if (message) expect(body.message).toMatch(message);
}

/** Polls GET /lists/{id} until the list reaches one of `statuses` (the test's own timeout bounds the wait). */
export async function waitForStatus(app: VerifyApp, key: string, id: string, statuses: string[]) {
  for (;;) {
    const res = await get(app, key, `/lists/${id}`);
    expect(res.statusCode).toBe(200);
    const list = res.json().data;
    if (statuses.includes(list.status)) return list;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
