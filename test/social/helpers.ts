// Shared helpers of the microblog's end-to-end tests.
import type { TestServer } from '../helpers/server';

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return { value, elapsedMs: Date.now() - started };
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every page of a list, following next_cursor; returns the items in order and the page count. */
export async function allPages(server: TestServer, path: string, key?: string): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  const sep = path.includes('?') ? '&' : '?';
  do {
    const r = await server.get(cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`, { key });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    items.push(...r.json.items);
    cursor = r.json.next_cursor;
    pages++;
    if (pages > 1000) throw new Error('runaway paging');
  } while (cursor !== null);
  return { items, pages };
}

export async function createPost(server: TestServer, key: string, text: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await server.post('/api/posts', { key, json: { text, ...extra } });
  if (r.status !== 201) throw new Error(`post failed: ${r.status} ${r.text}`);
  return r.json;
}
