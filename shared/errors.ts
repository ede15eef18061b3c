/**
 * One error hierarchy for the whole system. Services render any AppError as `{error, message, code}` with its
 * status; anything else is a 500 with a generic message (the real error is logged, never sent).
 */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Missing or invalid API key') {
    super(401, message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'Access denied') {
    super(403, message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Resource not found') {
    super(404, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, 'Rate limit exceeded', { ...headers, 'Retry-After': String(retryAfterSeconds) });
  }
}

/** The request did not arrive whole in time (a body that stalls or trickles); the connection closes after it. */
export class RequestTimeoutError extends AppError {
  constructor(message = 'Request Timeout') {
    super(408, message);
  }
}

/** How long a client should wait before retrying a 503, in seconds: its Retry-After, whatever was unavailable. */
export const RETRY_AFTER_SECONDS = 2;

export class ServiceUnavailableError extends AppError {
  constructor(message = 'Service temporarily unavailable') {
    super(503, message, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  }
}
