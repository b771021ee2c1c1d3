// The load generator of the benchmarks: autocannon, which ships no type declarations (this is the
// part of its API the benchmarks use), what a run is summarised into, and the post and redirect
// loads that several scenarios run.

export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  duration?: number;
  /** Ends the run after this many answers instead of after `duration`. */
  amount?: number;
  connections?: number;
  pipelining?: number;
  /** Requests per second over all connections; unlimited when absent. */
  overallRate?: number;
  /** Milliseconds between rate samples; a run ends at the first sample after its duration. */
  sampleInt?: number;
  requests?: Array<{ setupRequest?: (req: LoadRequest) => LoadRequest }>;
  setupClient?: (client: { setHeaders(h: Record<string, string>): void }) => void;
}

export interface LoadResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  duration: number;
  '1xx': number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** A running load: resolves with its result, and says how many requests each second answered. */
export interface LoadRun extends PromiseLike<LoadResult> {
  on(event: 'tick', listener: (tick: { counter: number }) => void): this;
}

let loaded: ((opts: LoadOptions) => LoadRun) | undefined;

/**
 * autocannon, loaded on its first run: a process that only paces posts (post-load.ts) never
 * needs it, and loading it costs a fresh process more CPU than its first seconds of posts.
 */
export function autocannon(opts: LoadOptions): LoadRun {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('autocannon') as (opts: LoadOptions) => LoadRun;
  return loaded(opts);
}

/** What a run is summarised into: the rate and latencies, and its answers by class. */
export interface LoadSummary {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  requests: number;
  status_2xx: number;
  status_3xx: number;
  status_4xx: number;
  status_5xx: number;
  /** Requests without an answer: connection errors and timeouts. */
  no_answer: number;
}

export function summarize(r: LoadResult): LoadSummary {
  const requests = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  return {
    // Answers over the run's measured length: a run ends on autocannon's next 1 s sample after
    // its duration, so this is the rate over the time it really ran.
    rps: r.duration > 0 ? requests / r.duration : r.requests.average,
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    max_ms: r.latency.max,
    requests,
    status_2xx: r['2xx'],
    status_3xx: r['3xx'],
    status_4xx: r['4xx'],
    status_5xx: r['5xx'],
    no_answer: r.errors + r.timeouts,
  };
}

/** Requests of a run that did not get the answer they should: no answer, or another class of status. */
export function failures(s: LoadSummary, expected: '2xx' | '3xx' = '2xx'): number {
  const good = expected === '2xx' ? s.status_2xx : s.status_3xx;
  return s.requests - good + s.no_answer;
}

/** The body of every post load: a post about as long as a typical one. */
export const POST_BODY = JSON.stringify({ text: 'A benchmark post with a little text in it, about as long as a typical one. #perch' });

/**
 * POST /api/posts on the server at `url` with POST_BODY; the load's connections take the API
 * `keys` in turn (one each, as they connect). Without keys, no Authorization header: the bare
 * baselines take none.
 */
export function postLoad(url: string, keys: readonly string[] = []): LoadOptions {
  return keyedLoad({ url: url + '/api/posts', method: 'POST', headers: { 'content-type': 'application/json' }, body: POST_BODY }, keys);
}

/** The header that presents an API key. */
export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}

/** `opts` with the load's connections taking the API `keys` in turn (one each, as they connect). */
export function keyedLoad(opts: LoadOptions, keys: readonly string[]): LoadOptions {
  if (keys.length === 0) return opts;
  const headers = opts.headers ?? {};
  let i = 0;
  return { ...opts, setupClient: (client) => client.setHeaders({ ...headers, ...bearer(keys[i++ % keys.length]) }) };
}

/** Links the redirect loads cycle through, and their connections. */
export const REDIRECT_LINKS = 10_000;
export const REDIRECT_CONNECTIONS = 100;

/** GET /{code}, every request the next code of `codes`, cycling. */
export function redirectLoad(url: string, codes: readonly string[]): LoadOptions {
  let i = 0;
  return { url, requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: '/' + codes[i++ % codes.length] }) }] };
}
