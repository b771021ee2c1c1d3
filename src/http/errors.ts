// Every error the API can answer, in one place: a code, a status and a default message.
// Handlers throw an HttpError; the HTTP layer turns it into the contract's error body.
import { log } from '../log';

export const ERRORS = {
  invalid_request: { status: 400, message: 'The request is invalid.' },
  unauthorized: { status: 401, message: 'A valid API key is required.' },
  password_required: { status: 401, message: 'This link is protected by a password.' },
  forbidden: { status: 403, message: 'You are not allowed to do this.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this path.' },
  conflict: { status: 409, message: 'This conflicts with something that already exists.' },
  gone: { status: 410, message: 'This link has expired.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  uri_too_long: { status: 414, message: 'The request URL is too long.' },
  unsupported_media_type: { status: 415, message: 'Unsupported Content-Type.' },
  rate_limited: { status: 429, message: 'Too many requests; slow down.' },
  internal: { status: 500, message: 'Something went wrong on our side.' },
  unavailable: { status: 503, message: 'The service is temporarily unavailable; try again shortly.' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? ERRORS[code].message);
    this.status = ERRORS[code].status;
  }

  body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

/**
 * A 400 naming every problem in `details`. Its message is the problem itself when there is one
 * (`url: must use http or https`), so that a client showing only the message still says what to
 * fix; several problems share one sentence, and the details name each.
 */
export function invalidRequest(details: ErrorDetail[], message = details.length === 1 ? detailSentence(details[0]) : ERRORS.invalid_request.message): HttpError {
  return new HttpError('invalid_request', message, { details });
}

/** One problem as a sentence; a problem of the body as a whole has no path: its message alone makes it. */
function detailSentence(d: ErrorDetail): string {
  return d.path ? `${d.path}: ${d.message}` : `${d.message.charAt(0).toUpperCase()}${d.message.slice(1)}.`;
}

export function invalidField(path: string, message: string): HttpError {
  return invalidRequest([{ path, message }]);
}

export function notFound(message = 'Not found.'): HttpError {
  return new HttpError('not_found', message);
}

export function unauthorized(message?: string): HttpError {
  return new HttpError('unauthorized', message, {}, { 'WWW-Authenticate': 'Bearer' });
}

export function forbidden(message?: string): HttpError {
  return new HttpError('forbidden', message);
}

export function conflict(message?: string): HttpError {
  return new HttpError('conflict', message);
}

export function methodNotAllowed(allow: string): HttpError {
  return new HttpError('method_not_allowed', undefined, {}, { Allow: allow });
}

/** 429 with the contract's retry hints; `retryAfterSeconds` is already rounded up and at least 1. */
export function rateLimited(retryAfterSeconds: number, message?: string): HttpError {
  const s = Math.max(1, Math.ceil(retryAfterSeconds));
  return new HttpError('rate_limited', message, { retry_after_seconds: s }, { 'Retry-After': String(s) });
}

export function unavailable(retryAfterSeconds: number, message?: string): HttpError {
  const s = Math.max(1, Math.ceil(retryAfterSeconds));
  return new HttpError('unavailable', message, { retry_after_seconds: s }, { 'Retry-After': String(s) });
}

/**
 * Seconds a client is told to wait when the disk is full: space comes back when an operator
 * frees it, not within a second, and a client retrying at once would only add load.
 */
export const DISK_FULL_RETRY_SECONDS = 30;

/** Whether a file-system error means the disk (or the user's quota) is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  // SQLITE_FULL: SQLite could not grow its database or its write-ahead log.
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL';
}

/**
 * The answer to a write that failed because the disk is full: 503 with Retry-After, since the
 * request itself was fine and will succeed once there is room. Logs one line saying so, naming
 * what could not be written, for the operator.
 */
export function diskFull(err: unknown, what: string): HttpError {
  const e = err as NodeJS.ErrnoException;
  log.error('disk full', { what, code: e.code, error: e.message });
  return unavailable(DISK_FULL_RETRY_SECONDS, 'The server is out of disk space; try again later.');
}

export const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  204: '204 No Content',
  302: '302 Found',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  410: '410 Gone',
  413: '413 Payload Too Large',
  414: '414 URI Too Long',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};
