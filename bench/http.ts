// Single requests of the benchmarks' set-up and checks (not of their loads): seeding through the
// API of a running server, reading its metrics, sampling a response's size.

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export async function call(base: string, method: string, path: string, opts: { key?: string; json?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(base + path, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json), redirect: 'manual' });
  const text = await r.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json };
}

/** The sum of a metric's samples in Prometheus text, over the lines whose labels contain `labels`. */
export function metricValue(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    if (line[name.length] !== ' ' && line[name.length] !== '{') continue;
    if (labels && !line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export async function metricsOf(base: string): Promise<string> {
  return (await call(base, 'GET', '/metrics')).text;
}

/**
 * The server's queues as its /metrics shows them: every outbox consumer's lag in events (whatever
 * it is called), the click queue, the search engine's write queue and the query-counting stream.
 */
export function queueGauges(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^(perch_[a-z0-9_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) continue;
    const [, name, labels, value] = m;
    if (name === 'perch_click_queue_depth' || name === 'perch_search_queue_depth' || name === 'perch_search_query_stream_entries' || name.endsWith('_lag_events')) {
      out[name + (labels ?? '')] = Number(value);
    }
  }
  return out;
}

/**
 * Waits until every queue of the server reads zero in two readings in a row (a reading can fall
 * between a thread's last answer and the un-awaited write that queues its work), reading every
 * `everyMs`, for at most `limitMs`; `reading` sees each reading. Answers whether they drained.
 */
export function queuesDrained(base: string, limitMs: number, reading?: (gauges: Record<string, number>) => void, everyMs = 250): Promise<boolean> {
  let zeroReadings = 0;
  return waitUntil(
    async () => {
      const gauges = queueGauges(await metricsOf(base));
      reading?.(gauges);
      zeroReadings = Object.values(gauges).every((v) => v === 0) ? zeroReadings + 1 : 0;
      return zeroReadings >= 2;
    },
    limitMs,
    everyMs,
  );
}

/** Waits until `check` holds, polling every `everyMs`; false when `timeoutMs` passed first. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The short codes of a key's links (newest first), at most `max`, paging through GET /api/links. */
export async function linksOf(base: string, key: string, max: number): Promise<string[]> {
  const codes: string[] = [];
  let cursor: string | null = null;
  do {
    const r: Answer = await call(base, 'GET', `/api/links?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key });
    if (r.status !== 200) throw new Error(`GET /api/links answered ${r.status}`);
    for (const link of r.json.items as Array<{ short_code: string }>) codes.push(link.short_code);
    cursor = r.json.next_cursor as string | null;
  } while (cursor && codes.length < max);
  return codes.slice(0, max);
}
