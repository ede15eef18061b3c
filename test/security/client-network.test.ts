import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { clientNetwork } from '../../shared/net/client-network.js';
import { voterId } from '../../shared/polls/voter.js';
import { createTestRuntime, type TestRuntime } from '../support/runtime.js';
import { http, startService, type Service } from './helpers.js';

/**
 * Issue 23, finding 1: an IPv6 client owns a whole /64 (or more), so anonymous rate limits, the admin-login
 * throttle and poll votes count its prefix, not its exact address. One keying function serves all three.
 */

describe('clientNetwork', () => {
  it('is the address itself for IPv4, and the IPv4 address for an IPv4-mapped one', () => {
    expect(clientNetwork('192.0.2.1')).toBe('192.0.2.1');
    expect(clientNetwork('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientNetwork('::FFFF:c000:201')).toBe('192.0.2.1');
  });

  it('is the /64 of an IPv6 address by default, however the address is written', () => {
    const expected = '2001:db8:1:2::/64';
    for (const ip of [
      '2001:db8:1:2::5',
      '2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd',
      '2001:DB8:1:2:ffff:ffff:ffff:ffff',
    ])
      expect(clientNetwork(ip)).toBe(expected);
    expect(clientNetwork('2001:db8:1:3::5')).not.toBe(expected);
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('takes any prefix length, masking inside a group', () => {
    expect(clientNetwork('2001:db8:1:2::5', 48)).toBe('2001:db8:1::/48');
    expect(clientNetwork('2001:db8:1:2::5', 56)).toBe('2001:db8:1:0::/56');
    expect(clientNetwork('2001:db8:1:2ff::5', 56)).toBe('2001:db8:1:200::/56');
    expect(clientNetwork('2001:db8:1:2::5', 128)).toBe('2001:db8:1:2:0:0:0:5/128');
    expect(clientNetwork('2001:db8:1:2::5', 60)).toBe(clientNetwork('2001:db8:1:f::5', 60));
  });

  it('gives poll votes the same voter across a /64, and rate limits the configured prefix', () => {
    expect(voterId(null, '2001:db8:1:2::5', 's')).toBe(voterId(null, '2001:db8:1:2:ffff::1', 's'));
    expect(voterId(null, '2001:db8:1:2::5', 's', 48)).toBe(voterId(null, '2001:db8:1:77::1', 's', 48));
    expect(loadConfig({}).rateLimits.ipv6Prefix).toBe(64);
    expect(loadConfig({ RATE_LIMIT_IPV6_PREFIX: '56' }).rateLimits.ipv6Prefix).toBe(56);
    expect(() => loadConfig({ RATE_LIMIT_IPV6_PREFIX: '129' })).toThrow(/RATE_LIMIT_IPV6_PREFIX/);
  });
});

describe('anonymous rate limits over IPv6, end to end', { timeout: 120_000 }, () => {
  let runtime: TestRuntime;
  let qa: Service;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    // Bound on ::1; the test is the trusted proxy there and names the client in X-Forwarded-For.
    qa = await startService(
      'qa',
      { ...runtime.env, RATE_LIMIT_ANONYMOUS_HOURLY: '3', TRUST_PROXY: '::1' },
      '::1',
    );
  }, 120_000);

  afterAll(async () => {
    await qa?.stop();
    await runtime?.close();
  });

  const get = (client: string) =>
    http(`${qa.base}/api/categories`, { headers: { 'x-forwarded-for': client } });

  it('counts every address of one /64 against one budget; another /64 has its own', async () => {
    const statuses = [];
    for (const ip of [
      '2001:db8:aa:bb::1',
      '2001:db8:aa:bb::abcd',
      '2001:db8:aa:bb:ffff:ffff:ffff:fffe',
      '2001:db8:aa:bb:1::42',
    ])
      statuses.push((await get(ip)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const other = await get('2001:db8:aa:bc::1');
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
  });

  it('counts the server’s own IPv6 peer (::1) by its /64 too', async () => {
    const direct = await http(`${qa.base}/api/categories`);
    expect(direct.status).toBe(200);
    // ::1 and ::2 share 0:0:0:0::/64: the second request spends the same budget.
    const sibling = await get('::2');
    expect(Number(sibling.headers.get('x-ratelimit-remaining'))).toBe(
      Number(direct.headers.get('x-ratelimit-remaining')) - 1,
    );
  });
});
