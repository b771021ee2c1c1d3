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
