import ipaddr from 'ipaddr.js';

/**
 * The network a client owns, as one string: the unit that rate limits, the admin-login throttle and poll voting
 * count. An IPv4 client is its address (an IPv4-mapped IPv6 address counts as the IPv4 address it maps). An IPv6
 * client is its prefix (/64 by default, RATE_LIMIT_IPV6_PREFIX): an ISP hands a customer a whole /64 (often a
 * /56 or /48), and a host picks any address in it at will, so counting exact addresses would give each client
 * 2^64 budgets.
 */

export const DEFAULT_IPV6_PREFIX = 64;

export function clientNetwork(ip: string, ipv6Prefix: number = DEFAULT_IPV6_PREFIX): string {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns ::ffff:a.b.c.d into a.b.c.d; a zone id (fe80::1%eth0) is dropped by parse.
    address = ipaddr.process(ip);
  } catch {
    return ip; // not an address (a unix socket, a test double): count it as given
  }
  if (address.kind() === 'ipv4') return address.toString();
  const prefix = Math.min(Math.max(Math.trunc(ipv6Prefix), 1), 128);
  const parts = (address as ipaddr.IPv6).parts.map((part, index) => {
    const kept = Math.min(Math.max(prefix - index * 16, 0), 16);
    return kept === 0 ? 0 : part & ((0xffff << (16 - kept)) & 0xffff);
  });
  // The written form stays the one poll voter ids were hashed from (`2001:db8:1:2::/64`, groups unpadded,
  // never compressed), so a vote cast before this module existed still counts as the same voter.
  const groups = Math.ceil(prefix / 16);
  const head = parts.slice(0, groups).map((p) => p.toString(16));
  return groups === 8 ? `${head.join(':')}/${prefix}` : `${head.join(':')}::/${prefix}`;
}
