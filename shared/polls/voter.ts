import { createHmac } from 'node:crypto';
import { clientNetwork, DEFAULT_IPV6_PREFIX } from '../net/client-network.js';

export { clientNetwork };

/**
 * Who casts a vote: the key's user when a key was sent, otherwise the client. A client is its network as
 * shared/net/client-network.ts defines it (its IPv4 address, or its IPv6 /64 by default: one host can pick any
 * address of its /64 at will), from request.ip, which honours X-Forwarded-For only behind TRUST_PROXY. It is
 * keyed-hashed with the app secret so the votes table never holds an address and a leaked table cannot be
 * reversed by trying all 2^32 IPv4 addresses.
 */
export function voterId(
  userId: number | null,
  ip: string,
  secret: string,
  ipv6Prefix: number = DEFAULT_IPV6_PREFIX,
): string {
  if (userId !== null) return `user:${userId}`;
  const digest = createHmac('sha256', secret)
    .update(`poll-voter\n${clientNetwork(ip, ipv6Prefix)}`)
    .digest('base64url');
  return `client:${digest.slice(0, 32)}`;
}
