// The embedded search engine: SQLite FTS5 in its own database file (search.db), so that indexing
// never waits on the main store's writer nor makes it wait, behind a bounded, durable write queue.
// A bulk request is accepted whole into the queue (one synced transaction) or rejected whole when
// the queue cannot take it; queued writes are applied to the index in order by `applyQueued`,
// which the supervisor runs in the pool while the queue is not empty. The queue's depth is what
// the indexing consumer's budget follows (core/write-budget.ts), as it would follow a cluster's.
import type { Sqlite } from '../store/sqlite';
import type { BulkAnswer, IndexOp, QueueState, SearchEngine } from './engine';
import { SearchIndexStore, openSearchDb } from './store';

export interface EmbeddedEngineOptions {
  /** The most writes the queue holds. */
  capacity: number;
  /**
   * A seam for tests: when it returns true the request is rejected as if the queue were full
   * (nothing is written), so a test can make the engine refuse work on demand.
   */
  rejectWhen?(ops: readonly IndexOp[], state: QueueState): boolean;
}

/**
 * Writes applied per transaction by applyQueued. Each transaction adds one segment to the FTS5
 * index, which FTS5 later merges with others: larger transactions make fewer, larger segments and
 * so less merging per post.
 */
export const APPLY_PER_TRANSACTION = 5000;

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

export class EmbeddedEngine implements SearchEngine {
  readonly store: SearchIndexStore;
  private readonly enqueue: (ops: readonly IndexOp[]) => BulkAnswer;

  constructor(
    db: Sqlite,
    private readonly options: EmbeddedEngineOptions,
  ) {
    this.store = new SearchIndexStore(db);
    const store = this.store;
    const capacity = options.capacity;
    // IMMEDIATE: the depth is read under the write lock, so two requests cannot both take the
    // queue's last places.
    this.enqueue = db.transaction((ops: readonly IndexOp[]): BulkAnswer => {
      const depth = store.queueDepth();
      if (depth + ops.length > capacity || options.rejectWhen?.(ops, { depth, capacity })) {
        return { accepted: false, reason: 'queue_full', depth, capacity };
      }
      store.enqueue(ops.map((o) => ({ postId: o.id, text: o.op === 'index' ? o.text : null })));
      // The backlog the request found: what says whether the engine keeps up. Counting the
      // request itself would make any batch over a tenth of the capacity look like a backlog.
      return { accepted: true, depth, capacity };
    }).immediate;
  }

  /** Opens the engine of a data directory on a connection of its own. */
  static open(dataDir: string, options: EmbeddedEngineOptions & { busyTimeoutMs?: number }): EmbeddedEngine {
    return new EmbeddedEngine(openSearchDb(dataDir, { busyTimeoutMs: options.busyTimeoutMs }), options);
  }

  async bulk(ops: readonly IndexOp[]): Promise<BulkAnswer> {
    try {
      return this.enqueue(ops);
    } catch (err) {
      // Another connection (a `perch reindex`) holds the write lock: the engine is unavailable
      // for now, which the consumer treats like a rejection.
      if (!isBusy(err)) throw err;
      return { accepted: false, reason: 'unavailable', depth: this.depthOrZero(), capacity: this.options.capacity };
    }
  }

  async queueState(): Promise<QueueState> {
    return { depth: this.store.queueDepth(), capacity: this.options.capacity };
  }

  private depthOrZero(): number {
    try {
      return this.store.queueDepth();
    } catch {
      return 0;
    }
  }

  /**
   * Applies queued writes to the index, oldest first, until the queue is empty or `maxMs` has
   * passed; returns how many. A busy database (a rebuild) ends the run early: the writes stay
   * queued for the next one.
   */
  applyQueued(maxMs: number, perTransaction = APPLY_PER_TRANSACTION): number {
    const store = this.store;
    const db = store.db;
    const deadline = performance.now() + maxMs;
    let applied = 0;
    const step = db.transaction(() => store.applyOldest(perTransaction));
    // Applying is not synced (NORMAL), only accepting is. An apply lost to a power cut loses its
    // removal of the queue rows with it (one transaction), so those writes are applied again; and
    // the next synced commit on search.db, an accepted request's, syncs the whole write-ahead log,
    // this apply's frames included. The sync of every apply bought nothing but disk time beside
    // the main store's commits.
    const level = db.pragma('synchronous', { simple: true }) as number;
    db.pragma('synchronous = NORMAL');
    try {
      for (;;) {
        const n = step.immediate();
        applied += n;
        if (n < perTransaction || performance.now() >= deadline) return applied;
      }
    } catch (err) {
      if (isBusy(err)) return applied;
      throw err;
    } finally {
      db.pragma(`synchronous = ${level}`);
    }
  }

  close(): void {
    this.store.db.close();
  }
}
