// The timeline benchmarks' server, shared by the scenarios that read timelines (timeline,
// readwrite) and those measured against timeline reads (search): 32 readers who each follow the
// same 10 authors, who have made 100 posts.
import { openSqlite, type Sqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import type { BenchContext, PerchTarget } from './context';
import { call } from './http';
import { seedFollows, seedUsers, type Seeded } from './seed';
import { openHotStore } from '../src/store/lmdb';
import { homeTimelines, windowCovers } from '../src/social/home-timelines';
import { isWindow, windowLength } from '../src/core/timeline-merge';

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
    for (let n = 0; n < 100; n++) await seedPost(target.url, authors, n);
    await waitFor(async () => (await call(target.url, 'GET', '/api/timeline?limit=50', { key: readers[readers.length - 1].key })).json.items.length === 50);
  });
  await ctx.progress.step('a full page in every reader\'s precomputed timeline', () => fillWindows(dir, target.url, authors, readers));
  return { target, authors, readers };
}

/** Page size the timeline scenarios read, and the ids a reader takes from a window for it. */
const PAGE_IDS = 51;

async function seedPost(url: string, authors: Seeded[], n: number): Promise<bigint> {
  const r = await call(url, 'POST', '/api/posts', { key: authors[n % authors.length].key, json: { text: `timeline post number ${n}, with a sentence of text to hydrate.` } });
  if (r.status !== 201) throw new Error(`seed post: ${r.status}`);
  return BigInt(r.json.id as string);
}

/**
 * Posts more until every reader's precomputed timeline holds a page, so that the reads measured are
 * served from the windows whatever the fan-out did at start. A reader's first value holds what
 * SQLite showed when the fan-out first reached them (docs/social.md), so this normally posts
 * nothing more; it matters when the windows were trimmed or made otherwise, and it is the check
 * that the scenario measures what it says.
 */
async function fillWindows(dir: string, url: string, authors: Seeded[], readers: Seeded[]): Promise<void> {
  const hot = openHotStore(dir);
  try {
    const timelines = homeTimelines(hot);
    const held = (userId: string) => {
      const value = timelines.getBinaryFast(userId);
      return isWindow(value) ? windowLength(value) : 0;
    };
    for (let n = 100; readers.some((r) => held(r.userId) < PAGE_IDS); ) {
      if (n >= 1000) throw new Error("the readers' precomputed timelines did not fill");
      let newest = 0n;
      for (const end = n + 10; n < end; n++) newest = await seedPost(url, authors, n);
      await waitFor(async () => readers.every((r) => windowCovers(timelines, r.userId, newest)));
    }
  } finally {
    await hot.close();
  }
}

export async function waitFor(check: () => Promise<boolean>, what = 'fan-out', timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
