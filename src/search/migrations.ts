// Schema of search: the query counts behind suggestions, in the main database (migration 8), and
// the search engine's own database file (search.db), which only search uses. Released migrations
// are never edited; a change is a new one.
import type { Migration } from '../store/migration';

// Every distinct normalised query ever searched, with its decaying count as of its last search
// (core/decay.ts): decay needs no rewrite, only a query searched again is updated. The counting
// task records the stream entries its last batch counted in `search_count_batch`, in the same
// transaction as the counts, so a batch is never counted twice (search/counting.ts).
export const queryCounts: Migration = {
  version: 8,
  name: 'search_query_counts',
  sql: `
    CREATE TABLE search_query_counts (
      query TEXT PRIMARY KEY,
      count REAL NOT NULL,
      updated_ms INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE search_count_batch (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      stream_keys TEXT NOT NULL
    );
  `,
};

export const MIGRATIONS: readonly Migration[] = [queryCounts];

/**
 * The engine's database, versioned by `PRAGMA user_version`. Everything in it but the write queue
 * can be rebuilt from the main database (`perch reindex`).
 * - `posts_fts`: the full-text index, one row per live post, its rowid the post id. Contentless
 *   (the text stays in the main database) with deletes allowed; unicode61 folds case and, with
 *   remove_diacritics 2, every diacritic.
 * - `write_queue`: the engine's bounded write queue. Bulk requests are appended here, durably,
 *   and applied to the index in order; `text` is null for a delete.
 * - `engine_meta`: when the index was last built from the main database.
 */
export const INDEX_SCHEMA: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE VIRTUAL TABLE posts_fts USING fts5(
        text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
      );
      CREATE TABLE write_queue (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        post_id INTEGER NOT NULL,
        text TEXT
      );
      CREATE TABLE engine_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    // Texts are indexed in their search form since (core/search-query.ts, searchForm): an index
    // built before holds compatibility forms and ß as written, which no query matches. Forgetting
    // when it was built makes the next server start build it again from the posts.
    version: 2,
    sql: `DELETE FROM engine_meta WHERE key = 'built_at';`,
  },
];
