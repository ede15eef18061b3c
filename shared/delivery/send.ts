import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { allowedAddresses, isForbiddenAddress } from '../verification/host-guard.js';
import { bareHostname, resolveHost, systemResolve, type Resolve } from './target.js';

/** What one HTTP attempt came to: the response status, or why there was none. */
export type AttemptResult = { status: number } | { error: string; blocked?: true };

export interface SendOptions {
  /** The whole attempt (resolution, connection, TLS, request, response head) ends after this. */
  timeoutMs: number;
  allowPrivate: boolean;
  resolve?: Resolve;
}

/**
 * POSTs `body` to `url` once. The host is resolved here, once; the address is checked against the guard and the
 * socket is opened to that very address (the Host header and TLS name stay the URL's), so a name cannot resolve to
 * a public address for the check and a private one for the connection (DNS rebinding). The socket's peer address
 * is checked again once connected, as a second line should the connection ever go anywhere else. Redirects are
 * not followed (node:http never does): a 3xx is the answer.
 * The response body is not read: the status is all a delivery needs.
 */
export async function sendOnce(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<AttemptResult> {
  const url = new URL(rawUrl);
  const started = Date.now();
  let addresses: string[];
  try {
    addresses = await resolveHost(url, options.resolve ?? systemResolve, options.timeoutMs);
  } catch (err) {
    return { error: `resolution failed: ${(err as Error).message}` };
  }
  const allowed = allowedAddresses(addresses, options.allowPrivate);
  if (allowed.length === 0)
    return {
      error: `${url.hostname} resolves only to loopback, private or reserved addresses`,
      blocked: true,
    };
  // A name with several addresses (IPv6 and IPv4, several hosts): one that cannot be connected to gives way to the
  // next, within the same time budget. Nothing has been sent before the connection is made, so this sends once.
  let result: AttemptResult & { connected?: boolean } = { error: 'no address' };
  for (const address of allowed) {
    const remainingMs = options.timeoutMs - (Date.now() - started);
    if (remainingMs <= 0) return { error: `no response within ${options.timeoutMs} ms` };
    result = await post(url, address, headers, body, remainingMs, options);
    if (result.connected !== false) break;
  }
  const { connected: _connected, ...outcome } = result;
  return outcome;
}

function post(
  url: URL,
  address: string,
  headers: Record<string, string>,
  body: string,
  remainingMs: number,
  { timeoutMs, allowPrivate }: SendOptions,
): Promise<AttemptResult & { connected: boolean }> {
  const hostname = bareHostname(url);
  const secure = url.protocol === 'https:';
  const payload = Buffer.from(body);
  return new Promise((resolve) => {
    let settled = false;
    let connected = false;
    const settle = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve({ ...result, connected });
    };
    const request = (secure ? https : http).request({
      host: address,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      // The IP literal is never the TLS name: the certificate is checked against the URL's host.
      ...(secure && !isIP(hostname) ? { servername: hostname } : {}),
      headers: { ...headers, host: url.host, 'content-length': String(payload.length) },
      // One connection per attempt: nothing pooled outlives the attempt's address check.
      agent: false,
    });
    const timer = setTimeout(() => settle({ error: `no response within ${timeoutMs} ms` }), remainingMs);
    request.on('socket', (socket) => {
      socket.once('connect', () => {
        connected = true;
        const peer = socket.remoteAddress;
        if (!allowPrivate && (peer === undefined || isForbiddenAddress(peer)))
          settle({ error: `connected to a forbidden address ${peer}`, blocked: true });
      });
    });
    request.on('response', (response) => settle({ status: response.statusCode ?? 0 }));
    request.on('error', (err: NodeJS.ErrnoException) =>
      settle({ error: err.code ? `${err.code}: ${err.message}` : err.message }),
    );
    request.end(payload);
  });
}
