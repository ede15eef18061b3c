import { describe, expect, it } from 'vitest';
import { allowedAddresses, isForbiddenAddress } from '../../shared/verification/host-guard.js';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.0.0.2',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '100.127.255.254',
    '169.254.169.254',
    '0.0.0.0',
    '192.0.2.10',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.251',
    '239.1.1.1',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fd12:3456::1',
    'fc00::1',
    'ff02::1',
    '2001:db8::25',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:c0a8:0101::1',
    '2001::1',
    'not-an-ip',
    '',
  ])('refuses %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2a00:1450:400c:c06::1a',
    '2607:f8b0:4004:c07::1b',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('allows %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});

describe('allowedAddresses', () => {
  it('filters private targets unless explicitly allowed', () => {
    const ips = ['127.0.0.2', '8.8.8.8', '::1'];
    expect(allowedAddresses(ips, false)).toEqual(['8.8.8.8']);
    expect(allowedAddresses(ips, true)).toEqual(ips);
  });
});
