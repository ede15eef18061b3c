import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses the prober may connect to. A domain's MX (and its A/AAAA) is chosen by
 * whoever owns the domain, so without this check an API caller could make us open SMTP
 * sessions to our own loopback, the cluster network or cloud metadata endpoints.
 */

// IANA special-purpose registries (RFC 6890 and successors): nothing here is a public MX.
const V4_FORBIDDEN: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT shared space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

const V6_FORBIDDEN: Array<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
];

const forbidden = new BlockList();
for (const [net, prefix] of V4_FORBIDDEN) forbidden.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of V6_FORBIDDEN) forbidden.addSubnet(net, prefix, 'ipv6');

/** True when `ip` is loopback, private, link-local, CGNAT, multicast, reserved or not an IP. */
export function isForbiddenAddress(ip: string): boolean {
  if (isIPv4(ip)) return forbidden.check(ip, 'ipv4');
  if (!isIPv6(ip)) return true;
  const embedded = embeddedIPv4(ip);
  // IPv4-mapped, IPv4-compatible, NAT64 and 6to4 addresses reach the embedded IPv4 address:
  // judge that one, or ::ffff:127.0.0.1 would slip through.
  if (embedded !== null) return forbidden.check(embedded, 'ipv4');
  return forbidden.check(ip, 'ipv6');
}

/** Keeps the addresses the prober may use; all of them when private targets are allowed. */
export function allowedAddresses(ips: readonly string[], allowPrivate: boolean): string[] {
  return allowPrivate ? [...ips] : ips.filter((ip) => !isForbiddenAddress(ip));
}

function embeddedIPv4(ip: string): string | null {
  const words = expandIPv6(ip);
  if (words === null) return null;
  const tail = `${words[6]! >> 8}.${words[6]! & 255}.${words[7]! >> 8}.${words[7]! & 255}`;
  const zeros = (from: number, to: number): boolean => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return tail; // ::ffff:a.b.c.d
  if (zeros(0, 6) && (words[6] !== 0 || words[7]! > 1)) return tail; // ::a.b.c.d (deprecated)
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return tail; // 64:ff9b::/96 NAT64
  if (words[0] === 0x2002) return `${words[1]! >> 8}.${words[1]! & 255}.${words[2]! >> 8}.${words[2]! & 255}`; // 6to4
  return null;
}

function expandIPv6(ip: string): number[] | null {
  let text = ip.split('%')[0] ?? '';
  // A dotted IPv4 tail counts as two 16-bit words.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const parts = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headWords = head === '' ? [] : head.split(':');
  const tailWords = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headWords.length - tailWords.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  const words = [...headWords, ...Array<string>(missing).fill('0'), ...tailWords].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}
