// All of search's SQL: the engine's database (search.db: the FTS5 index, its write queue, its
// meta data), the main database's posts and outbox as the indexer and `perch reindex` read them,
// and the query counts behind suggestions. Post ids are 64-bit: bound as bigint and read with
// safeIntegers, never as a JavaScript number.
import Database, { type Statement } from 'better-sqlite3';
import { join } from 'node:path';
import { BUSY_TIMEOUT_MS, endsSql, spanSql, switchToWal, type Sqlite } from '../store/sqlite';
import type { DecayedCount } from '../core/decay';
import { partitionSql } from '../core/partition';
import { searchForm } from '../core/search-query';
import { INDEX_SCHEMA } from './migrations';

export function searchDbPath(dataDir: string): string {
  return join(dataDir, 'search.db');
}

export interface SearchDbOptions {
  /**
   * How long a statement waits for another connection's write lock before failing with
   * SQLITE_BUSY. The indexer keeps it short: a busy engine answers as a rejection, and the
   * budget backs off, instead of holding a pool thread.
   */
  busyTimeoutMs?: number;
  /** Sync every commit (the write queue's acceptance is durable); the index alone can be rebuilt. */
  synchronous?: 'FULL' | 'NORMAL';
}

/** Opens (creating if needed) the engine's database and brings its schema up to date. */
export function openSearchDb(dataDir: string, opts: SearchDbOptions = {}): Sqlite {
  const db = new Database(searchDbPath(dataDir));
  const busyTimeoutMs = opts.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  switchToWal(db, busyTimeoutMs);
  db.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
  const current = db.pragma('user_version', { simple: true }) as number;
  const pending = INDEX_SCHEMA.filter((s) => s.version > current);
  if (pending.length > 0) {
    db.transaction(() => {
      // Another process may have migrated it meanwhile: look again inside the write lock.
      const now = db.pragma('user_version', { simple: true }) as number;
      for (const s of INDEX_SCHEMA) {
        if (s.version <= now) continue;
        db.exec(s.sql);
        db.pragma(`user_version = ${s.version}`);
      }
    }).immediate();
  }
  return db;
}

/**
 * Rows leave the write queue only from its head, and sequence numbers are never reused: the queue
 * is the contiguous range MIN..MAX, read from the ends of the rowid tree whatever its length.
 */
export const QUEUE_HEAD_SQL = endsSql('write_queue', 'seq');
export const QUEUE_DEPTH_SQL = spanSql('write_queue', 'seq');

/** Queued writes appended per statement: a statement call and its bindings per row cost more than the row. */
const ENQUEUE_ROWS_PER_STATEMENT = 64;

/** What the index is given of a post's text (null: a delete): the form queries are matched in. */
function indexedText(text: string | null): string | null {
  return text === null ? null : searchForm(text);
}

/** The engine's database: the index, the write queue and meta data. */
export class SearchIndexStore {
  private readonly s: {
    depth: Statement;
    head: Statement;
    enqueue: Statement;
    enqueueMany: Statement;
    deletesIn: Statement;
    indexRun: Statement;
    deleteRun: Statement;
    dequeue: Statement;
    upsert: Statement;
    recent: Statement;
    relevant: Statement;
    documents: Statement;
    getMeta: Statement;
    setMeta: Statement;
    command: Statement;
    clearQueue: Statement;
  };

  constructor(readonly db: Sqlite) {
    this.s = {
      depth: db.prepare(QUEUE_DEPTH_SQL).pluck(),
      head: db.prepare(QUEUE_HEAD_SQL).raw(),
      enqueue: db.prepare('INSERT INTO write_queue (post_id, text) VALUES (?, ?)'),
      enqueueMany: db.prepare(`INSERT INTO write_queue (post_id, text) VALUES ${Array(ENQUEUE_ROWS_PER_STATEMENT).fill('(?, ?)').join(', ')}`),
      // Applying runs in SQL, a run of writes per statement: the texts go from the queue to the
      // index without becoming JavaScript strings on the way. Deletes are few; the writes between
      // two of them are one run of index writes, applied in queue order.
      deletesIn: db.prepare('SELECT seq FROM write_queue WHERE seq BETWEEN ? AND ? AND text IS NULL ORDER BY seq').pluck(),
      indexRun: db.prepare('INSERT OR REPLACE INTO posts_fts (rowid, text) SELECT post_id, text FROM write_queue WHERE seq BETWEEN ? AND ? ORDER BY seq'),
      deleteRun: db.prepare('DELETE FROM posts_fts WHERE rowid IN (SELECT post_id FROM write_queue WHERE seq BETWEEN ? AND ?)'),
      dequeue: db.prepare('DELETE FROM write_queue WHERE seq <= ?'),
      upsert: db.prepare('INSERT OR REPLACE INTO posts_fts (rowid, text) VALUES (?, ?)'),
      recent: db.prepare('SELECT rowid FROM posts_fts WHERE posts_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?').pluck().safeIntegers(true),
      // bm25() is lower for a better match. Equal scores go newest first.
      relevant: db.prepare('SELECT rowid FROM posts_fts WHERE posts_fts MATCH ? ORDER BY bm25(posts_fts), rowid DESC LIMIT ?').pluck().safeIntegers(true),
      documents: db.prepare('SELECT COUNT(*) FROM posts_fts').pluck(),
      getMeta: db.prepare('SELECT value FROM engine_meta WHERE key = ?').pluck(),
      setMeta: db.prepare('INSERT INTO engine_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      command: db.prepare('INSERT INTO posts_fts (posts_fts) VALUES (?)'),
      clearQueue: db.prepare('DELETE FROM write_queue'),
    };
  }

  /** Writes waiting in the queue. */
  queueDepth(): number {
    return this.s.depth.get() as number;
  }

  /**
   * Appends writes to the queue, in order, in the caller's transaction. The post id, its decimal
   * text, is stored as the integer it is (the column's INTEGER affinity).
   */
  enqueue(ops: ReadonlyArray<{ postId: string; text: string | null }>): void {
    const per = ENQUEUE_ROWS_PER_STATEMENT;
    let i = 0;
    if (ops.length >= per) {
      const values: unknown[] = new Array(per * 2);
      for (; i + per <= ops.length; i += per) {
        for (let k = 0; k < per; k++) {
          values[k * 2] = ops[i + k].postId;
          values[k * 2 + 1] = indexedText(ops[i + k].text);
        }
        this.s.enqueueMany.run(values);
      }
    }
    for (; i < ops.length; i++) this.s.enqueue.run(ops[i].postId, indexedText(ops[i].text));
  }

  /**
   * Applies the oldest `limit` queued writes to the index, in order, and removes them from the
   * queue, in the caller's transaction; returns how many. The queue is the contiguous range of
   * sequence numbers MIN..MAX (rows leave only from its head), so its first `limit` writes are
   * MIN..MIN + limit - 1.
   */
  applyOldest(limit: number): number {
    const [first, last] = this.s.head.get() as [number | null, number | null];
    if (first === null || last === null) return 0;
    const upTo = Math.min(last, first + limit - 1);
    let from = first;
    for (const deleteAt of this.s.deletesIn.all(first, upTo) as number[]) {
      if (deleteAt > from) this.s.indexRun.run(from, deleteAt - 1);
      this.s.deleteRun.run(deleteAt, deleteAt);
      from = deleteAt + 1;
    }
    if (from <= upTo) this.s.indexRun.run(from, upTo);
    this.s.dequeue.run(upTo);
    return upTo - first + 1;
  }

  /** Ids of matching posts below `before`, newest first. */
  recent(match: string, before: bigint, limit: number): bigint[] {
    return this.s.recent.all(match, before, limit) as bigint[];
  }

  /** Ids of the best `limit` matching posts, best first (BM25), equal scores newest first. */
  relevant(match: string, limit: number): bigint[] {
    return this.s.relevant.all(match, limit) as bigint[];
  }

  /** Posts in the index. */
  documents(): number {
    return this.s.documents.get() as number;
  }

  meta(key: string): string | undefined {
    return this.s.getMeta.get(key) as string | undefined;
  }

  setMeta(key: string, value: string): void {
    this.s.setMeta.run(key, value);
  }

  /** Empties the index and the queue, in the caller's transaction. */
  clear(): void {
    this.s.command.run('delete-all');
    this.s.clearQueue.run();
  }

  /** Adds a post that is not in the index yet (a rebuild), in the caller's transaction. */
  insert(postId: bigint, text: string): void {
    this.s.upsert.run(postId, searchForm(text));
  }

  /** Merges the index's segments into one, for the fastest reads (after a rebuild). */
  optimize(): void {
    this.s.command.run('optimize');
  }
}

/** An outbox event the indexer acts on, with the post as it is now (null text: gone). */
export type PostEventRow = [seq: number, type: 'post_created' | 'post_deleted', postId: string, text: string | null];

/** What the indexer and a rebuild read of the main database. */
export class IndexSourceStore {
  private readonly eventsStmt: Statement;
  private readonly partitionEventsStmt: Statement;
  private readonly livePostsStmt: Statement;

  constructor(db: Sqlite) {
    // Sequence numbers fit a JavaScript number and events keep the post id as its decimal text,
    // so a row needs no BigInt: the id goes to the engine as the text it is.
    const events = (partitioned: boolean) =>
      db
        .prepare(
          `SELECT e.seq, e.type, e.post_id, CASE WHEN p.deleted_at IS NULL THEN p.text END
           FROM events e LEFT JOIN posts p ON p.id = CAST(e.post_id AS INTEGER)
           WHERE e.seq > @after AND e.seq <= @upTo AND e.type IN ('post_created', 'post_deleted')
             ${partitioned ? `AND ${partitionSql('CAST(e.post_id AS INTEGER)', '@partitions', '@partition')}` : ''}
           ORDER BY e.seq LIMIT @limit`,
        )
        .raw();
    this.eventsStmt = events(false);
    // The partition is chosen here, not by the caller after reading: each partition then reads
    // (and looks up the post text of) only its own events, instead of every partition all of them.
    this.partitionEventsStmt = events(true);
    this.livePostsStmt = db.prepare('SELECT id, text FROM posts WHERE deleted_at IS NULL').raw().safeIntegers(true);
  }

  /**
   * The first `limit` post events in (after, upTo] of the posts in `partition` of `partitions`
   * (core/partition.ts), in order, each with the post's text unless it is deleted.
   */
  postEvents(after: number, upTo: number, partition = 0, partitions = 1, limit = -1): PostEventRow[] {
    if (partitions === 1) return this.eventsStmt.all({ after, upTo, limit }) as PostEventRow[];
    return this.partitionEventsStmt.all({ after, upTo, partitions, partition, limit }) as PostEventRow[];
  }

  /** Every live post, [id, text], read in one snapshot. */
  livePosts(): IterableIterator<[bigint, string]> {
    return this.livePostsStmt.iterate() as IterableIterator<[bigint, string]>;
  }
}

/** The decaying counts of past queries (migration 8). */
export class QueryCountStore {
  private readonly getStmt: Statement;
  private readonly putStmt: Statement;
  private readonly batchStmt: Statement;
  private readonly setBatchStmt: Statement;
  private readonly sortedStmt: Statement;
  private readonly countStmt: Statement;
  private readonly fadedStmt: Statement;
  private readonly removeFadedStmt: Statement;

  constructor(readonly db: Sqlite) {
    this.getStmt = db.prepare('SELECT count, updated_ms FROM search_query_counts WHERE query = ?').raw();
    this.putStmt = db.prepare(
      'INSERT INTO search_query_counts (query, count, updated_ms) VALUES (?, ?, ?) ON CONFLICT(query) DO UPDATE SET count = excluded.count, updated_ms = excluded.updated_ms',
    );
    this.batchStmt = db.prepare('SELECT stream_keys FROM search_count_batch WHERE id = 1').pluck();
    this.setBatchStmt = db.prepare('INSERT INTO search_count_batch (id, stream_keys) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET stream_keys = excluded.stream_keys');
    this.sortedStmt = db.prepare('SELECT query, count, updated_ms FROM search_query_counts ORDER BY query').raw();
    this.countStmt = db.prepare('SELECT COUNT(*) FROM search_query_counts').pluck();
    // The value now, as core/decay.ts computes it: count · 2^-(now − updated)/halfLife.
    const faded = 'count * pow(2, (updated_ms - @now) / @halfLife) < @below';
    this.fadedStmt = db.prepare(`SELECT query FROM search_query_counts WHERE query > @after AND ${faded} ORDER BY query LIMIT @limit`).pluck();
    this.removeFadedStmt = db.prepare(`DELETE FROM search_query_counts WHERE query = @query AND ${faded}`);
  }

  /** Up to `limit` queries after `after` (in key order) whose value at `nowMs` is below `below`. */
  fadedAfter(after: string, nowMs: number, halfLifeMs: number, below: number, limit: number): string[] {
    return this.fadedStmt.all({ after, now: nowMs, halfLife: halfLifeMs, below, limit }) as string[];
  }

  /**
   * Deletes these queries, in one transaction, each only if its value is still below `below` (a
   * query counted again since it was read stays); returns how many were deleted.
   */
  removeFaded(queries: readonly string[], nowMs: number, halfLifeMs: number, below: number): number {
    return this.db.transaction(() => {
      let n = 0;
      for (const query of queries) n += this.removeFadedStmt.run({ query, now: nowMs, halfLife: halfLifeMs, below }).changes;
      return n;
    }).immediate();
  }

  get(query: string): DecayedCount | null {
    const row = this.getStmt.get(query) as [number, number] | undefined;
    return row ? { count: row[0], updatedMs: row[1] } : null;
  }

  put(query: string, c: DecayedCount): void {
    this.putStmt.run(query, c.count, c.updatedMs);
  }

  /** The stream entries the last counted batch came from (JSON), if any. */
  lastBatch(): string | undefined {
    return this.batchStmt.get() as string | undefined;
  }

  setLastBatch(streamKeys: string): void {
    this.setBatchStmt.run(streamKeys);
  }

  /** Every query with its count, sorted by query (byte order), read in one snapshot. */
  sorted(): IterableIterator<[string, number, number]> {
    return this.sortedStmt.iterate() as IterableIterator<[string, number, number]>;
  }

  queries(): number {
    return this.countStmt.get() as number;
  }
}
