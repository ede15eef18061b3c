import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export const loggerOptions = (level: string, name: string): LoggerOptions => ({
  level,
  name,
  // Never log secrets that travel in headers.
  redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', '*.apiKey', '*.key'],
});

export function createLogger(level: string, name = 'agora'): Logger {
  return pino(loggerOptions(level, name));
}
