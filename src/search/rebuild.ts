// Rebuilding the search index from the durable store: `perch reindex`, and the first start of a
// server whose index was never built. The engine's write lock is taken first and held until the
// end, then every live post is read in one snapshot of the main database: whatever the indexer
// wrote before is replaced by a snapshot that contains it, and whatever it writes after (the
// queue is emptied too) it derives from events and posts at least as new, so the index ends up
// matching the store either way (docs/search.md).
import type { IndexSourceStore, SearchIndexStore } from './store';

export interface RebuildResult {
  posts: number;
  ms: number;
}

export function rebuildIndex(source: IndexSourceStore, index: SearchIndexStore, now = () => new Date()): RebuildResult {
  const started = performance.now();
  const posts = index.db.transaction(() => {
    index.clear();
    let n = 0;
    for (const [id, text] of source.livePosts()) {
      index.insert(id, text);
      n++;
    }
    index.setMeta('built_at', now().toISOString());
    return n;
  }).immediate();
  index.optimize();
  return { posts, ms: performance.now() - started };
}
