import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyReply } from 'fastify';
import type { ValidatorFactory } from '@fastify/ajv-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../../shared/config.js';
import { ValidationError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { clientErrorHandler, errorBody, registerErrorHandling } from './errors.js';
import { registerJsonParser } from './json-body.js';
import { recordRoutes } from './route-table.js';
import { registerTextRule } from './text-rule.js';
import { buildValidator, schemaErrorFormatter } from './validation.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// An incoming X-Request-Id (from a proxy or the caller) is kept when it is sane, so one id spans services.
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

const hops = (n: number) => (_address: string, index: number) => index < n;

/** The Fastify instance both services start from: logging with request ids, limits, error body. */
export function createHttpApp(
  config: Pick<Config, 'bodyLimitBytes' | 'trustProxy' | 'requestTimeoutMs'>,
  logger: Logger,
) {
  const requestTimeout = config.requestTimeoutMs;
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    genReqId: requestId,
    bodyLimit: config.bodyLimitBytes,
    // A number is a hop count: trust that many proxies in front of us.
    trustProxy: typeof config.trustProxy === 'number' ? hops(config.trustProxy) : config.trustProxy,
    clientErrorHandler,
    // Router-level rejections (a malformed %-escape, a path parameter over maxParamLength) get our body too.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const code =
        error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
      const message = code === 414 ? 'URI Too Long' : 'Malformed URL';
      void reply.code(code).send(errorBody(code, message));
    },
    // 1,100 characters hold a vector of 100 int4 ids separated by ";" (/api/questions/{ids}).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1100 },
    // Slow or stuck clients must not pin a socket forever: a request not whole after requestTimeout
    // (HTTP_REQUEST_TIMEOUT_MS) is answered 408 with the error body (clientErrorHandler). Node looks for such
    // requests only every connectionsCheckingInterval (30 s by default), so a client that went silent reached the
    // idle connectionTimeout first and was closed without a word (130 s), and one that trickled got its 408 at up
    // to 150 s. Checked every second, the 408 comes within a second of requestTimeout, before the idle timeout.
    http: {
      // Node answers an HTTP/1.1 request without Host itself (a bare 400, no body); it reaches the hook below
      // instead, which refuses it with the error body.
      requireHostHeader: false,
      connectionsCheckingInterval: Math.min(1000, Math.ceil(requestTimeout / 4)),
      headersTimeout: Math.min(60_000, requestTimeout),
      requestTimeout,
    },
    requestTimeout,
    connectionTimeout: requestTimeout + 10_000,
    // Query strings and path parameters are coerced, bodies validated strictly; messages in plain words
    // (validation.ts). The text rule and the JSON depth bound run before validation, for every route.
    schemaController: { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory } },
    schemaErrorFormatter,
  });
  answerWhatNodeRefuses(app.server);
  recordRoutes(app);
  registerJsonParser(app);
  registerTextRule(app);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (HTTP/1.0 may omit it).
    // Thrown, not sent: the route's scope words it (the newsletter's errors carry `success: false` too).
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
      throw new ValidationError('Missing Host header');
  });
  registerErrorHandling(app);
  return app.withTypeProvider<TypeBoxTypeProvider>();
}

export type HttpApp = ReturnType<typeof createHttpApp>;

/**
 * Two requests Node answers before any route sees them, with a bare status or nothing at all: an `Expect` other
 * than 100-continue (a 417 with no body) and CONNECT (the socket closed without a word). Both get the error body.
 */
function answerWhatNodeRefuses(server: Server): void {
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    res.end(JSON.stringify(errorBody(417, 'Expectation Failed: only 100-continue is supported')));
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const body = JSON.stringify(errorBody(405, 'CONNECT is not supported'));
    socket.on('error', () => {});
    socket.end(
      'HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
