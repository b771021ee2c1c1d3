// The load generator of every benchmark: autocannon, which ships no type declarations (this is
// the part of its API the benchmarks use), and the redirect load that two of them run.

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
