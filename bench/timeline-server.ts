// The timeline benchmarks' server, shared by the scenarios that read timelines (timeline,
// readwrite) and those measured against timeline reads (search): 32 readers who each follow the
// same 10 authors, who have made 100 posts.
import { openSqlite, type Sqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import type { BenchContext, PerchTarget } from './context';
import { call } from './http';
import { seedFollows, seedUsers, type Seeded } from './seed';

export interface TimelineServer {
  target: PerchTarget;
  authors: Seeded[];
  readers: Seeded[];
}

export interface TimelineServerOptions {
  /** Configuration deep-merged over the defaults. */
  config?: Record<string, unknown>;
  /** More data written into the store before the server starts. */
  seed?(db: Sqlite): void;
}

/**
 * A server whose 32 readers each follow the same 10 authors, who have made 100 posts; returns
 * once the last reader's first page is full.
 */
export async function timelineServer(ctx: BenchContext, opts: TimelineServerOptions = {}): Promise<TimelineServer> {
  const dir = ctx.tempDir('perch-bench-social-');
  const { authors, readers } = await ctx.progress.step('seeded readers following authors', () => {
    const db = openSqlite(dir);
    migrateAll(db);
    const authors = seedUsers(db, 'author', 10, true);
    const readers = seedUsers(db, 'reader', 32, true);
    const edges: Array<[string, string]> = [];
    for (const r of readers) for (const a of authors) edges.push([r.userId, a.userId]);
    seedFollows(db, edges);
    opts.seed?.(db);
    db.close();
    return { authors, readers };
  });
  const target = await ctx.startPerch(dir, opts.config);
  await ctx.progress.step('100 posts by the authors, in every reader\'s timeline', async () => {
    for (let n = 0; n < 100; n++) {
      const r = await call(target.url, 'POST', '/api/posts', { key: authors[n % authors.length].key, json: { text: `timeline post number ${n}, with a sentence of text to hydrate.` } });
      if (r.status !== 201) throw new Error(`seed post: ${r.status}`);
    }
    await waitFor(async () => (await call(target.url, 'GET', '/api/timeline?limit=50', { key: readers[readers.length - 1].key })).json.items.length === 50);
  });
  return { target, authors, readers };
}

export async function waitFor(check: () => Promise<boolean>, what = 'fan-out', timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
