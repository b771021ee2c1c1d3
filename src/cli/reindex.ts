// perch reindex: rebuilds the search index (search.db) from the posts in the durable store. Safe
// while the server runs: it holds the engine's write lock for the rebuild (the server's indexer
// sees the engine as unavailable meanwhile, backs off and retries), and reads every live post in
// one snapshot (search/rebuild.ts says why nothing is lost either way).
import { openSqlite } from '../store/sqlite';
import { migrateAll } from '../capabilities';
import { rebuildIndex } from '../search/rebuild';
import { IndexSourceStore, SearchIndexStore, openSearchDb } from '../search/store';
import { announceDataDir, commandConfig, existingDataDirOf, type CommonOptions } from './common';
import { printJson } from './usage';

interface ReindexOptions extends CommonOptions {
  json: boolean;
}

/** How long to wait for a server's indexer to let go of the engine's write lock. */
const LOCK_WAIT_MS = 30_000;

export function reindexCommand(opts: ReindexOptions): void {
  commandConfig(opts);
  const dir = existingDataDirOf(opts);
  announceDataDir(dir, { json: opts.json });
  const db = openSqlite(dir);
  try {
    migrateAll(db);
    const index = new SearchIndexStore(openSearchDb(dir, { busyTimeoutMs: LOCK_WAIT_MS }));
    try {
      const r = rebuildIndex(new IndexSourceStore(db), index);
      if (opts.json) printJson({ posts: r.posts, seconds: Number((r.ms / 1000).toFixed(3)) });
      else process.stdout.write(`indexed ${r.posts} posts in ${(r.ms / 1000).toFixed(1)} s\n`);
    } finally {
      index.db.close();
    }
  } finally {
    db.close();
  }
}
