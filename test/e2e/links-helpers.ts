// Shared steps of the short-link e2e tests.
import type { Key, Res, TestServer } from '../helpers/server';
import { eventually } from '../helpers/eventually';

export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

export async function shorten(server: TestServer, key: Key, body: Record<string, unknown>): Promise<Res> {
  return server.post('/api/shorten', { key: key.key, json: body });
}

export async function create(server: TestServer, key: Key, url: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await shorten(server, key, { url, ...extra });
  if (r.status !== 201) throw new Error(`shorten failed: ${r.status} ${r.text}`);
  return r.json.short_code as string;
}

export function limitHeaders(r: Res): { limit: number; remaining: number; reset: number } {
  return {
    limit: Number(r.headers.get('x-ratelimit-limit')),
    remaining: Number(r.headers.get('x-ratelimit-remaining')),
    reset: Number(r.headers.get('x-ratelimit-reset')),
  };
}

export function hasLimitHeaders(r: Res): boolean {
  return ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].every((h) => /^\d+$/.test(r.headers.get(h) ?? ''));
}

/** The value `probe` gives once it gives one (eventually), within `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  return (await eventually(what, timeoutMs, probe)).value;
}

export async function metric(server: TestServer, name: string): Promise<number | undefined> {
  const r = await server.get('/metrics');
  const line = r.text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}
