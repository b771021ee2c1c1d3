// CORS (server.cors_origins): which browser origins may call the API, and the headers that say
// so. `["*"]` allows any origin; the default `[]` allows none (the web client is same-origin and
// needs no CORS). An allowed origin is echoed back rather than answered with `*`. While any origin
// is allowed, every answer carries `Vary: Origin`, those that allow nothing too, so that a cache
// never hands one origin's answer to another.

/** What a cross-origin caller may send; preflights answer with these. */
export const CORS_ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
export const CORS_ALLOW_HEADERS = 'Authorization, X-Api-Key, Content-Type, If-None-Match';
/** Response headers a cross-origin caller may read, beyond the handful every browser allows. */
export const CORS_EXPOSE_HEADERS = 'Location, Retry-After, ETag, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
/** How long a browser may reuse a preflight's answer, in seconds. */
export const CORS_MAX_AGE = '600';

/** The headers of an answer to a request from no allowed origin, while CORS is on. */
const VARY_ONLY: ReadonlyArray<readonly [string, string]> = [['Vary', 'Origin']];

export class CorsPolicy {
  private readonly any: boolean;
  private readonly origins: ReadonlySet<string>;

  /** `origins` as the configuration checked them: "*" or http(s) origins (config.ts). */
  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins.filter((o) => o !== '*').map((o) => new URL(o).origin));
  }

  /** Whether any origin at all is allowed (if not, requests are not even looked at). */
  get enabled(): boolean {
    return this.any || this.origins.size > 0;
  }

  /** Whether a request's Origin header names an allowed origin. */
  allows(origin: string): boolean {
    if (origin === '') return false;
    return this.any || this.origins.has(origin);
  }

  /**
   * What an answer to a request with this Origin header ('' for none) adds: an allowed origin's
   * headers; `Vary: Origin` alone for any other while CORS is on, since the answer still depends
   * on the header; nothing (null) while it is off.
   */
  answerHeaders(origin: string): ReadonlyArray<readonly [string, string]> | null {
    if (this.allows(origin)) return this.responseHeaders(origin);
    return this.enabled ? VARY_ONLY : null;
  }

  /** The same for a preflight's 204: the preflight headers for an allowed origin. */
  preflightAnswerHeaders(origin: string): ReadonlyArray<readonly [string, string]> | null {
    if (this.allows(origin)) return this.preflightHeaders(origin);
    return this.enabled ? VARY_ONLY : null;
  }

  /** Headers on any answer to an allowed origin. */
  responseHeaders(origin: string): Array<[string, string]> {
    return [
      ['Access-Control-Allow-Origin', origin],
      ['Vary', 'Origin'],
      ['Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS],
    ];
  }

  /** Headers of a preflight's 204 for an allowed origin. */
  preflightHeaders(origin: string): Array<[string, string]> {
    return [
      ['Access-Control-Allow-Origin', origin],
      ['Vary', 'Origin'],
      ['Access-Control-Allow-Methods', CORS_ALLOW_METHODS],
      ['Access-Control-Allow-Headers', CORS_ALLOW_HEADERS],
      ['Access-Control-Max-Age', CORS_MAX_AGE],
    ];
  }
}

/** `OPTIONS` on the API is a preflight, answered before routing and without a key. */
export function isPreflight(method: string, url: string): boolean {
  return method === 'options' && (url === '/api' || url.startsWith('/api/'));
}
