import { promises as dns } from 'node:dns';
import net from 'node:net';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { allowedAddresses } from '../../shared/verification/host-guard.js';
import { SmtpError, SmtpSession } from '../../shared/verification/smtp-client.js';
import { requireScope } from '../http/auth.js';
import { ErrorResponse, errorBody } from '../http/errors.js';
import type { VerifyDeps } from './deps.js';

/**
 * GET /verify/self-check?host=… — can this deployment verify mail at all? Most "everything is unknown" reports
 * come from outbound port 25 being blocked (cloud providers do it by default). The check resolves the host,
 * opens TCP to host:VERIFY_SMTP_PORT (the private-address guard applies, as for any MX, unless
 * VERIFY_ALLOW_PRIVATE_MX), waits for the SMTP greeting, says QUIT, and checks that VERIFY_HELO_NAME resolves.
 * Needs an X-API-Key with the admin scope (403 for a plain verify key). See docs/operations.md "Port 25 runbook".
 */

export const DEFAULT_SELF_CHECK_HOST = 'gmail-smtp-in.l.google.com';
// Hard ceiling for one check, whatever VERIFY_SMTP_TIMEOUT_MS says: an operator is waiting at a terminal.
const MAX_STEP_MS = 10_000;
const HOST =
  /^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?$/;

type Outcome = 'ok' | 'blocked' | 'refused' | 'rejected' | 'no_greeting' | 'private_address' | 'dns_failed';

const ADVICE: Record<Outcome, string> = {
  ok: 'Outbound SMTP works: the host answered with a 220 greeting.',
  blocked:
    'The TCP connection timed out: outbound port 25 is most likely blocked by the hosting provider or a firewall. ' +
    'Ask the provider to lift the block, or run the verify workers where port 25 is open (docs/operations.md).',
  refused:
    'The connection was refused: nothing listens on that port there, or a firewall rejects it actively.',
  rejected:
    'The server greeted with a refusal: this IP address is probably on a block list of that provider.',
  no_greeting: 'The connection opened but no SMTP greeting came: a proxy or tarpit sits in the way.',
  private_address:
    'The host resolves only to loopback, private or reserved addresses, which the prober refuses unless ' +
    'VERIFY_ALLOW_PRIVATE_MX=true.',
  dns_failed: 'The host name did not resolve: check VERIFY_DNS_SERVERS and the name.',
};

const Query = Type.Object(
  {
    host: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 253,
        description: `Mail host to try (default ${DEFAULT_SELF_CHECK_HOST})`,
      }),
    ),
  },
  { additionalProperties: false },
);

const SelfCheck = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    host: Type.String(),
    port: Type.Integer(),
    outbound_smtp: Type.String({ description: Object.keys(ADVICE).join(' | ') }),
    advice: Type.String(),
    addresses: Type.Array(Type.String()),
    address_used: Type.Union([Type.String(), Type.Null()]),
    connected: Type.Boolean(),
    greeting: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    elapsed_ms: Type.Integer(),
    helo: Type.Object({
      name: Type.String(),
      resolves: Type.Boolean(),
      addresses: Type.Array(Type.String()),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
  }),
});

export const selfCheckRoutes: FastifyPluginAsyncTypebox<{ deps: VerifyDeps }> = async (app, { deps }) => {
  const { verify } = deps.config;
  const stepMs = Math.min(verify.smtpTimeoutMs, MAX_STEP_MS);
  const resolver = new dns.Resolver({ timeout: Math.min(verify.dnsTimeoutMs, MAX_STEP_MS), tries: 2 });
  if (verify.dnsServers.length > 0) resolver.setServers(verify.dnsServers);

  const resolveAll = async (name: string): Promise<{ addresses: string[]; error: string | null }> => {
    if (net.isIP(name)) return { addresses: [name], error: null };
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    const addresses = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    const failure = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    return {
      addresses,
      error:
        addresses.length > 0 ? null : String((failure?.reason as NodeJS.ErrnoException)?.code ?? 'ENODATA'),
    };
  };

  app.get(
    '/verify/self-check',
    {
      schema: {
        tags: ['operations'],
        summary: 'Check that outbound SMTP (port 25) and the HELO name work from this deployment',
        querystring: Query,
        response: { 200: SelfCheck, '4xx': ErrorResponse, '5xx': ErrorResponse },
      },
      // An operator tool: it resolves any name and connects out, so a plain verify key could map internal DNS.
      onRequest: requireScope('admin'),
    },
    async (request, reply) => {
      const host = (request.query.host ?? DEFAULT_SELF_CHECK_HOST).trim().replace(/\.$/, '');
      if (!net.isIP(host) && !HOST.test(host)) {
        return reply.status(400).send(errorBody(400, 'host must be a host name or an IP address'));
      }
      const started = Date.now();
      const [target, helo] = await Promise.all([resolveAll(host), resolveAll(verify.heloName)]);
      const usable = allowedAddresses(target.addresses, verify.allowPrivateMx);
      let outcome: Outcome;
      let probe: Probe = { connected: false, greeting: null, error: null, address: null };
      if (target.addresses.length === 0) outcome = 'dns_failed';
      else if (usable.length === 0) outcome = 'private_address';
      else {
        // IPv4 first (more MX hosts listen there); a second address only when the first cannot be reached.
        const ordered = [...usable.filter(net.isIPv4), ...usable.filter(net.isIPv6)].slice(0, 2);
        for (const address of ordered) {
          probe = await greet(address, verify.smtpPort, verify.heloName, stepMs);
          if (probe.connected) break;
        }
        outcome = classify(probe);
      }
      request.log.info({ host, outcome, error: probe.error }, 'verification self-check');
      return {
        success: true as const,
        data: {
          host,
          port: verify.smtpPort,
          outbound_smtp: outcome,
          advice: ADVICE[outcome],
          addresses: target.addresses,
          address_used: probe.address,
          connected: probe.connected,
          greeting: probe.greeting,
          error: probe.error ?? target.error,
          elapsed_ms: Date.now() - started,
          helo: {
            name: verify.heloName,
            resolves: helo.addresses.length > 0,
            addresses: helo.addresses,
            error: helo.error,
          },
        },
      };
    },
  );
};

interface Probe {
  address: string | null;
  connected: boolean;
  /** The greeting's text (all lines of a multi-line reply, joined by "\n"). */
  greeting: string | null;
  /** timeout | a socket error code (ECONNREFUSED, EHOSTUNREACH, …) | closed | protocol */
  error: string | null;
}

function classify(probe: Probe): Outcome {
  if (probe.greeting !== null) return probe.greeting.startsWith('220') ? 'ok' : 'rejected';
  if (!probe.connected) return probe.error === 'ECONNREFUSED' ? 'refused' : 'blocked';
  return 'no_greeting';
}

/**
 * Connects and reads the (possibly multi-line) greeting with the engine's SMTP client, then says QUIT. Every step
 * is bounded by timeoutMs.
 */
async function greet(address: string, port: number, heloName: string, timeoutMs: number): Promise<Probe> {
  try {
    const { session, greeting } = await SmtpSession.connect({
      address,
      port,
      servername: address,
      heloName,
      timeoutMs,
    });
    void session.quit();
    return { address, connected: true, greeting: greeting.raw, error: null };
  } catch (err) {
    if (!(err instanceof SmtpError)) throw err;
    // The client names the connect step in its message: a timeout there means no TCP connection at all.
    const connected =
      err.kind !== 'connection_failed' && !(err.kind === 'timeout' && /^connect\b/.test(err.message));
    const error =
      err.kind === 'connection_failed' ? (/\bE[A-Z]+\b/.exec(err.message)?.[0] ?? 'error') : err.kind;
    return { address, connected, greeting: null, error };
  }
}
