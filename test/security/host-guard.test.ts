import { describe, expect, it } from 'vitest';
import { addressRange, allowedAddresses, isForbiddenAddress } from '../../shared/verification/host-guard.js';

/**
 * Issue 23, finding 9: the guard against connecting to non-public addresses, checked against the whole of
 * IANA's IPv4 and IPv6 Special-Purpose Address Registries (every entry: its first and last address), plus
 * multicast and the IPv4-embedding forms. The old hand-made list missed ::ffff:0:0:0/96 and 64:ff9b:1::/48.
 */

// [block, first address, last address]
const IPV4_REGISTRY: [string, string, string][] = [
  ['0.0.0.0/8 "this network"', '0.0.0.0', '0.255.255.255'],
  ['10.0.0.0/8 private-use', '10.0.0.0', '10.255.255.255'],
  ['100.64.0.0/10 shared address space', '100.64.0.0', '100.127.255.255'],
  ['127.0.0.0/8 loopback', '127.0.0.0', '127.255.255.255'],
  ['169.254.0.0/16 link-local', '169.254.0.0', '169.254.255.255'],
  ['172.16.0.0/12 private-use', '172.16.0.0', '172.31.255.255'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.0', '192.0.0.255'],
  ['192.0.0.0/29 IPv4 service continuity prefix', '192.0.0.0', '192.0.0.7'],
  ['192.0.0.8/32 IPv4 dummy address', '192.0.0.8', '192.0.0.8'],
  ['192.0.0.9/32 port control protocol anycast', '192.0.0.9', '192.0.0.9'],
  ['192.0.0.10/32 TURN anycast', '192.0.0.10', '192.0.0.10'],
  ['192.0.0.170/32, 192.0.0.171/32 NAT64/DNS64 discovery', '192.0.0.170', '192.0.0.171'],
  ['192.0.2.0/24 documentation (TEST-NET-1)', '192.0.2.0', '192.0.2.255'],
  ['192.31.196.0/24 AS112-v4', '192.31.196.0', '192.31.196.255'],
  ['192.52.193.0/24 AMT', '192.52.193.0', '192.52.193.255'],
  ['192.88.99.0/24 deprecated 6to4 relay anycast', '192.88.99.0', '192.88.99.255'],
  ['192.168.0.0/16 private-use', '192.168.0.0', '192.168.255.255'],
  ['192.175.48.0/24 direct delegation AS112 service', '192.175.48.0', '192.175.48.255'],
  ['198.18.0.0/15 benchmarking', '198.18.0.0', '198.19.255.255'],
  ['198.51.100.0/24 documentation (TEST-NET-2)', '198.51.100.0', '198.51.100.255'],
  ['203.0.113.0/24 documentation (TEST-NET-3)', '203.0.113.0', '203.0.113.255'],
  ['240.0.0.0/4 reserved', '240.0.0.0', '255.255.255.254'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255', '255.255.255.255'],
  ['224.0.0.0/4 multicast (not in the registry, never unicast)', '224.0.0.0', '239.255.255.255'],
];

const IPV6_REGISTRY: [string, string, string][] = [
  ['::1/128 loopback', '::1', '::1'],
  ['::/128 unspecified', '::', '::'],
  ['::ffff:0:0/96 IPv4-mapped (of a private IPv4 address)', '::ffff:10.0.0.1', '::ffff:127.255.255.255'],
  ['::ffff:0:0:0/96 IPv4-translated (RFC 6145)', '::ffff:0:0:0', '::ffff:0:ffff:ffff'],
  ['64:ff9b::/96 IPv4-IPv6 translation (of a private IPv4 address)', '64:ff9b::a00:1', '64:ff9b::c0a8:101'],
  ['64:ff9b:1::/48 local-use IPv4/IPv6 translation', '64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
  ['100::/64 discard-only', '100::', '100::ffff:ffff:ffff:ffff'],
  ['100:0:0:1::/64 dummy IPv6 prefix', '100:0:0:1::', '100:0:0:1:ffff:ffff:ffff:ffff'],
  ['2001::/23 IETF protocol assignments', '2001::', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001::/32 TEREDO', '2001::', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:1::1/128 port control protocol anycast', '2001:1::1', '2001:1::1'],
  ['2001:1::2/128 TURN anycast', '2001:1::2', '2001:1::2'],
  ['2001:1::3/128 DNS-SD service registration anycast', '2001:1::3', '2001:1::3'],
  ['2001:2::/48 benchmarking', '2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff'],
  ['2001:3::/32 AMT', '2001:3::', '2001:3:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:4:112::/48 AS112-v6', '2001:4:112::', '2001:4:112:ffff:ffff:ffff:ffff:ffff'],
  ['2001:10::/28 deprecated ORCHID', '2001:10::', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:20::/28 ORCHIDv2', '2001:20::', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:30::/28 drone remote ID', '2001:30::', '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2001:db8::/32 documentation', '2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2002::/16 6to4 (of a private IPv4 address)', '2002:a00:1::', '2002:c0a8:101:ffff:ffff:ffff:ffff:ffff'],
  [
    '2620:4f:8000::/48 direct delegation AS112 service',
    '2620:4f:8000::',
    '2620:4f:8000:ffff:ffff:ffff:ffff:ffff',
  ],
  ['3fff::/20 documentation', '3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['5f00::/16 segment routing SIDs', '5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fc00::/7 unique-local', 'fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fe80::/10 link-local unicast', 'fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fec0::/10 deprecated site-local', 'fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['ff00::/8 multicast', 'ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['::/96 deprecated IPv4-compatible', '::0.0.0.2', '::255.255.255.255'],
];

describe('the address guard refuses every IANA special-purpose block', () => {
  it.each([...IPV4_REGISTRY, ...IPV6_REGISTRY])('%s', (_block, first, last) => {
    expect(isForbiddenAddress(first), first).toBe(true);
    expect(isForbiddenAddress(last), last).toBe(true);
  });

  it('refuses the two blocks the hand-made list missed, with their names', () => {
    expect(addressRange('::ffff:0:808:808')).toBe('rfc6145');
    expect(addressRange('64:ff9b:1::808:808')).toBe('rfc6052');
    expect(isForbiddenAddress('::ffff:0:808:808')).toBe(true);
    expect(isForbiddenAddress('64:ff9b:1::808:808')).toBe(true);
  });

  it('judges the IPv4-embedding forms by the IPv4 address they reach', () => {
    for (const ip of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::FFFF:169.254.169.254',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
    ])
      expect(isForbiddenAddress(ip), ip).toBe(true);
    for (const ip of [
      '::ffff:8.8.8.8',
      '::ffff:808:808',
      '64:ff9b::808:808',
      '64:ff9b::8.8.8.8',
      '2002:808:808::1',
    ])
      expect(isForbiddenAddress(ip), ip).toBe(false);
  });

  it('refuses what is not an address at all, and zone-scoped link-local addresses', () => {
    for (const ip of [
      '',
      'not-an-ip',
      '1.2.3',
      '::1::1',
      '300.1.1.1',
      '::ffff:300.1.1.1',
      'fe80::1%eth0',
      'localhost',
    ])
      expect(isForbiddenAddress(ip), ip).toBe(true);
  });
});

describe('the address guard allows ordinary global unicast', () => {
  // Just outside the blocks above, and well-known public hosts.
  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '192.0.3.0',
    '192.88.98.255',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2a00:1450:400c:c06::1a',
    '2607:f8b0:4004:c07::1b',
    '2001:200::1',
    '2001:4860:4860::8888',
    '2003::1',
    '2620:4f:7fff:ffff:ffff:ffff:ffff:ffff',
    '2620:4f:8001::',
    '3ffe:ffff::1',
    '4000::1',
    'fbff:ffff::1',
    '64:ff9a:ffff::1',
    '64:ff9b:2::1',
  ])('%s', (ip) => {
    expect(addressRange(ip), ip).toBe('unicast');
    expect(isForbiddenAddress(ip), ip).toBe(false);
  });
});

describe('allowedAddresses', () => {
  it('filters special-purpose targets unless explicitly allowed', () => {
    const ips = ['127.0.0.2', '8.8.8.8', '::1', '64:ff9b:1::1', '2a00:1450:400c:c06::1a'];
    expect(allowedAddresses(ips, false)).toEqual(['8.8.8.8', '2a00:1450:400c:c06::1a']);
    expect(allowedAddresses(ips, true)).toEqual(ips);
  });
});
