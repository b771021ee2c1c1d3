// The timeline benchmarks' server, shared by the scenarios that read timelines (timeline,
// readwrite) and those measured against timeline reads (search): 32 readers who each follow the
// same 10 authors, who have made 100 posts.
import { rmSync } from 'node:fs';
import { startServer, tempDataDir, type TestServer } from '../test/helpers/server';
import { openSqlite, type Sqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { seedFollows, seedUsers, type Seeded } from './seed';

export interface TimelineServer {
  dir: string;
  server: TestServer;
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
export async function timelineServer(opts: TimelineServerOptions = {}): Promise<TimelineServer> {
  const dir = tempDataDir('perch-bench-social-');
  const db = openSqlite(dir);
  migrateAll(db);
  const authors = seedUsers(db, 'author', 10, true);
  const readers = seedUsers(db, 'reader', 32, true);
  const edges: Array<[string, string]> = [];
  for (const r of readers) for (const a of authors) edges.push([r.userId, a.userId]);
  seedFollows(db, edges);
  opts.seed?.(db);
  db.close();
  const server = await startServer({ dataDir: dir, threads: 1, config: opts.config });
  try {
    for (let n = 0; n < 100; n++) {
      const r = await server.post('/api/posts', { key: authors[n % authors.length].key, json: { text: `timeline post number ${n}, with a sentence of text to hydrate.` } });
      if (r.status !== 201) throw new Error(`seed post: ${r.status}`);
    }
    await waitFor(async () => (await server.get('/api/timeline?limit=50', { key: readers[readers.length - 1].key })).json.items.length === 50);
  } catch (err) {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, server, authors, readers };
}

export async function waitFor(check: () => Promise<boolean>, what = 'fan-out', timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
