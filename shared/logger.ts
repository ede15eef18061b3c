import { pino, type Logger, type LoggerOptions } from 'pino';
import { errorSerializer, requestSerializer } from './log-serializers.js';

export type { Logger };

export const loggerOptions = (level: string, name: string): LoggerOptions => ({
  level,
  name,
  // Never log secrets that travel in headers.
  redact: [
    'req.headers.authorization',
    'req.headers["x-api-key"]',
    'req.headers.cookie',
    '*.apiKey',
    '*.key',
  ],
  // Fastify keeps these over its own (they win in its child logger): tokens out of URLs, SQL out of errors.
  serializers: { req: requestSerializer, err: errorSerializer },
});

/** Servers log to stdout; command-line tools pass `stderr` so their stdout carries only their output. */
export function createLogger(level: string, name = 'agora', to: 'stdout' | 'stderr' = 'stdout'): Logger {
  return pino(loggerOptions(level, name), pino.destination(to === 'stdout' ? 1 : 2));
}

/** A connection URL fit for a log line: the password, if any, masked. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
