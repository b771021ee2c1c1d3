// Shared helpers of the microblog's end-to-end tests.
import type { TestServer } from '../helpers/server';

export { eventually } from '../helpers/eventually';

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
