import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses the prober (and outbound webhooks) may connect to. A domain's MX (and its A/AAAA) is chosen
 * by whoever owns the domain, and a webhook URL by whoever registers it, so without this check a caller could
 * make us open connections to our own loopback, the cluster network or cloud metadata endpoints.
 *
 * The rule: only ordinary global unicast is allowed, i.e. an address in no entry of IANA's IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and successors) and not multicast. The ranges come from ipaddr.js
 * (`range()`), which tracks those registries, plus the two entries it lacks. Special-purpose blocks that IANA
 * marks globally reachable (AS112, AMT, ORCHIDv2, the 2001:1::/48 anycast services) are refused as well: no mail
 * server or webhook receiver lives there. Addresses that embed an IPv4 address and reach it when connected to
 * (IPv4-mapped ::ffff:0:0/96, the NAT64 well-known prefix 64:ff9b::/96, 6to4 2002::/16) are judged by that
 * IPv4 address, or ::ffff:127.0.0.1 would slip through while ::ffff:8.8.8.8 stays usable.
 */

const ALLOWED_RANGE = 'unicast';

// Registry entries ipaddr.js does not know (yet): refused outright.
const EXTRA_IPV6: [ipaddr.IPv6, number][] = [
  ipaddr.IPv6.parseCIDR('::/96'), // IPv4-compatible addresses, deprecated (RFC 4291 §2.5.5.1)
  ipaddr.IPv6.parseCIDR('100:0:0:1::/64'), // dummy IPv6 prefix (RFC 9780)
];
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** The special-purpose range `ip` falls in ('private', 'loopback', 'rfc6145', …), 'unicast' or 'invalid'. */
export function addressRange(ip: string): string {
  // Node's strict parser first: ipaddr.js also reads legacy forms (`1.2.3`, `0x7f.1`, `2130706433`).
  if (isIP(ip) === 0) return 'invalid';
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(ip.includes(':') ? dottedTailAsHex(ip) : ip);
  } catch {
    return 'invalid';
  }
  if (address.kind() === 'ipv4') return address.range();
  const v6 = address as ipaddr.IPv6;
  if (EXTRA_IPV6.some((cidr) => v6.match(cidr))) return v6.match(EXTRA_IPV6[0]!) ? 'ipv4Compatible' : 'dummy';
  const embedded = embeddedIPv4(v6);
  return embedded ? embedded.range() : v6.range();
}

/** True when `ip` is loopback, private, link-local, shared, multicast, reserved, any other special range, or not an IP. */
export function isForbiddenAddress(ip: string): boolean {
  return addressRange(ip) !== ALLOWED_RANGE;
}

/** Keeps the addresses the prober may use; all of them when private targets are allowed. */
export function allowedAddresses(ips: readonly string[], allowPrivate: boolean): string[] {
  return allowPrivate ? [...ips] : ips.filter((ip) => !isForbiddenAddress(ip));
}

/**
 * ipaddr.js reads any IPv6 address with a dotted tail as IPv4-mapped (`::8.8.8.8` becomes ::ffff:8.8.8.8), where
 * the socket layer connects to the IPv4-compatible ::808:808: rewrite the tail as two hex groups first so both agree.
 */
function dottedTailAsHex(ip: string): string {
  const match = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!match) return ip;
  const octets = match.slice(2).map(Number);
  if (octets.some((o) => o > 255)) throw new Error('not an address');
  const group = (a: number, b: number) => ((a << 8) | b).toString(16);
  return `${match[1]}${group(octets[0]!, octets[1]!)}:${group(octets[2]!, octets[3]!)}`;
}

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
  if (address.isIPv4MappedAddress()) return v4(p[6]!, p[7]!);
  if (address.match(NAT64_WELL_KNOWN)) return v4(p[6]!, p[7]!);
  if (address.range() === '6to4') return v4(p[1]!, p[2]!);
  return null;
}
