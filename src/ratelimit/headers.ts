// The contract's limiter headers, on every response of a rate-limited endpoint, and the 429.
import type { LimitOutcome } from '../core/token-bucket';
import { rateLimited, type HttpError } from '../http/errors';

export function rateLimitHeaders(d: LimitOutcome): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(d.resetUnix),
  };
}

/**
 * The 429 for a rejected decision: contract body, Retry-After and the limiter headers. `limit`
 * names the limit that was hit (`shorten_burst`, `shorten_daily`, `anomaly`, ...), in the body, so
 * that a client can tell a burst it can wait out from a quota that lasts until tomorrow.
 */
export function rateLimitError(d: LimitOutcome, message?: string, limit?: string): HttpError {
  const err = rateLimited(d.retryAfterSeconds, message);
  if (limit !== undefined) err.extra.limit = limit;
  Object.assign(err.headers, rateLimitHeaders(d));
  return err;
}

