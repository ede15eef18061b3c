import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';

/**
 * Who casts a vote: the key's user when a key was sent, otherwise the client. A client is its IP address as
 * Fastify resolves it (request.ip, which honours X-Forwarded-For only behind TRUST_PROXY), keyed-hashed with the
 * app secret so the votes table never holds an address and a leaked table cannot be reversed by trying all
 * 2^32 IPv4 addresses. An IPv6 client counts as its /64: one host can pick any address of its /64 at will.
 */
export function voterId(userId: number | null, ip: string, secret: string): string {
  if (userId !== null) return `user:${userId}`;
  const digest = createHmac('sha256', secret)
    .update(`poll-voter\n${clientNetwork(ip)}`)
    .digest('base64url');
  return `client:${digest.slice(0, 32)}`;
}

export function clientNetwork(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  return `${expand(ip).slice(0, 4).join(':')}::/64`;
}

function expand(ip: string): string[] {
  const [head = '', tail = ''] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = ip.includes('::') ? 8 - left.length - right.length : 0;
  return [...left, ...Array<string>(Math.max(missing, 0)).fill('0'), ...right].map((h) =>
    h.toLowerCase().replace(/^0+(?=.)/, ''),
  );
}
