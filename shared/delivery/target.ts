import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ValidationError } from '../errors.js';
import { isForbiddenAddress } from '../verification/host-guard.js';

/**
 * Where a delivery may go. A callback or webhook URL is chosen by the API caller, so without a guard a caller
 * could make our workers POST to our own loopback, the cluster network or a cloud metadata endpoint. The same
 * address rules as MX hosts (shared/verification/host-guard.ts) apply: loopback, private and reserved addresses
 * are refused unless WEBHOOK_ALLOW_PRIVATE is set.
 */

export const MAX_URL_LENGTH = 2048;

/** Resolves a host name to its addresses; the system resolver (getaddrinfo, /etc/hosts included) by default. */
export type Resolve = (hostname: string) => Promise<string[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Parses a delivery URL; the reason it is refused otherwise. */
export function parseTargetUrl(raw: string): URL | string {
  if (typeof raw !== 'string' || raw.length === 0) return 'a URL is required';
  if (raw.length > MAX_URL_LENGTH) return `the URL is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'only http:// and https:// URLs are accepted';
  // Credentials in a URL end up in logs and in the delivery log; the signature authenticates us instead.
  if (url.username || url.password) return 'the URL must not contain a user name or password';
  if (!url.hostname) return 'the URL has no host';
  return url;
}

/** The host of a URL as a resolver or a socket takes it (IPv6 literals without their brackets). */
export const bareHostname = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Every address the URL's host resolves to (an IP literal is its own address); rejects past `timeoutMs`. */
export async function resolveHost(url: URL, resolve: Resolve, timeoutMs: number): Promise<string[]> {
  const host = bareHostname(url);
  if (isIP(host)) return [host];
  let timer: NodeJS.Timeout | undefined;
  // getaddrinfo cannot be cancelled: past the deadline its answer is ignored.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`resolving ${host} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const addresses = await Promise.race([resolve(host), deadline]);
    if (addresses.length === 0) throw new Error(`${host} has no address`);
    return addresses;
  } finally {
    clearTimeout(timer);
  }
}

const CHECK_TIMEOUT_MS = 5000;

/**
 * Validates a callback/webhook URL when it is registered: http(s) only, at most 2048 characters, no credentials,
 * and (unless `allowPrivate`) a host that resolves, none of whose addresses is loopback, private or reserved.
 * Throws a ValidationError (400) saying what is wrong. Deliveries check the address again when they connect.
 */
export async function checkCallbackUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve?: Resolve },
): Promise<void> {
  const url = parseTargetUrl(raw);
  if (typeof url === 'string') throw new ValidationError(`Invalid callback URL: ${url}`);
  if (options.allowPrivate) return;
  let addresses: string[];
  try {
    addresses = await resolveHost(url, options.resolve ?? systemResolve, CHECK_TIMEOUT_MS);
  } catch {
    throw new ValidationError(`Invalid callback URL: the host ${url.hostname} does not resolve`);
  }
  // The addresses themselves are not echoed: under split-horizon DNS they would tell a caller our internal ones.
  if (addresses.some(isForbiddenAddress))
    throw new ValidationError(
      `Invalid callback URL: the host ${url.hostname} resolves to a loopback, private or reserved address; such targets are refused`,
    );
}
