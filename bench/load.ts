// The load generator of every benchmark: autocannon, which ships no type declarations (this is
// the part of its API the benchmarks use), and the post and redirect loads that several run.

export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
}

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  duration?: number;
  connections?: number;
  pipelining?: number;
  /** Requests per second over all connections; unlimited when absent. */
  overallRate?: number;
  requests?: Array<{ setupRequest?: (req: LoadRequest) => LoadRequest }>;
  setupClient?: (client: { setHeaders(h: Record<string, string>): void }) => void;
}

export interface LoadResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  '2xx': number;
  '3xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
export const autocannon = require('autocannon') as (opts: LoadOptions) => Promise<LoadResult>;

/** The body of every post load: a post about as long as a typical one. */
export const POST_BODY = JSON.stringify({ text: 'A benchmark post with a little text in it, about as long as a typical one. #perch' });

/**
 * POST /api/posts on the server at `url` with POST_BODY; the load's connections take the API
 * `keys` in turn (one each, as they connect). Without keys, no Authorization header: the bare
 * baselines take none.
 */
export function postLoad(url: string, keys: readonly string[] = []): LoadOptions {
  const headers = { 'content-type': 'application/json' };
  let i = 0;
  return {
    url: url + '/api/posts',
    method: 'POST',
    headers,
    body: POST_BODY,
    ...(keys.length > 0 ? { setupClient: (client) => client.setHeaders({ ...headers, authorization: `Bearer ${keys[i++ % keys.length]}` }) } : {}),
  };
}

/** Links the redirect loads cycle through, and their connections. */
export const REDIRECT_LINKS = 10_000;
export const REDIRECT_CONNECTIONS = 100;

/** GET /{code} for `seconds`, every request the next code of `codes`, cycling. */
export function redirectLoad(url: string, codes: string[], seconds: number): Promise<LoadResult> {
  let i = 0;
  return autocannon({
    url,
    duration: seconds,
    connections: REDIRECT_CONNECTIONS,
    requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: '/' + codes[i++ % codes.length] }) }],
  });
}
