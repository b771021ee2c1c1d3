// The redirect cache: code → [target URL, expiry ms (0: none), time the entry was read from
// SQLite, 1 when a password guards the link]. Two levels: a per-thread Map (no decoding at all on a hit) over a shared LMDB database
// (one read, shared by every thread and process), over SQLite on a miss. Every entry carries the
// moment it was read from SQLite, and no level serves an entry older than the TTL, so even an
// invalidation that never arrives (another process) cannot keep an old target alive past one TTL.
// Edits and deletions drop the entry from LMDB and, through the publish/subscribe port, from the
// memory of every HTTP thread of the process; the editing request waits for their acknowledgements.
import { errorFields, log } from '../log';
import { topic, type PubSub } from '../pubsub/port';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { LinkStore } from './store';

export const REDIRECT_CACHE_DB = 'link_redirects';

/**
 * [url, expiresMs (0 when the link never expires), cachedAtMs, protected (1 when a password guards
 * the link, else 0)]. The redirect reads one field to tell a password link apart; an entry written
 * before passwords existed has no fourth field, which reads as unprotected, as it was.
 */
export type CacheEntry = [string, number, number, number];

/**
 * The expiry field of a tombstone: the shared level's mark that a link was edited or deleted at
 * [2]. A fill read from SQLite before that moment never replaces it (fill, below), so a thread
 * that read a link just before its deletion cannot bring it back into the shared level after the
 * invalidation; a fill read after it does.
 */
export const TOMBSTONE = -1;

function ignoreFailure(): void {}

function onCacheWriteError(err: unknown): void {
  log.error('redirect cache write failed', errorFields(err));
}

export class RedirectCache {
  readonly db: LmdbDb<CacheEntry, string>;
  private readonly memory = new Map<string, CacheEntry>();
  private lastWrite: Promise<unknown> | undefined;

  constructor(
    hot: HotStore,
    private readonly store: LinkStore,
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {
    this.db = hot.db<CacheEntry, string>(REDIRECT_CACHE_DB);
  }

  /** The entry of a code, or undefined when no such link exists. */
  lookup(code: string, nowMs: number): CacheEntry | undefined {
    let e = this.memory.get(code);
    if (e !== undefined && nowMs - e[2] < this.ttlMs) return e;
    e = this.db.get(code);
    if (e !== undefined && e[1] !== TOMBSTONE && nowMs - e[2] < this.ttlMs) {
      this.remember(code, e);
      return e;
    }
    // `nowMs` was taken before this read, so the entry never claims to be fresher than it is.
    const row = this.store.target(code);
    if (row === undefined) {
      this.memory.delete(code);
      return undefined;
    }
    e = [row.url, row.expires_ms ?? 0, nowMs, row.protected];
    this.remember(code, e);
    this.fill(code, e);
    return e;
  }

  /**
   * Writes a fresh entry to the shared level, un-awaited (lmdb-js runs it with the other writes
   * of this event-loop turn, later), unless by then an invalidation at or after the moment the
   * entry was read has left its tombstone there: the check runs inside the write transaction, so
   * it is ordered with the invalidation's own write.
   */
  private fill(code: string, e: CacheEntry): void {
    const db = this.db;
    const p = db.transaction(() => {
      const current = db.get(code);
      if (current !== undefined && current[1] === TOMBSTONE && current[2] >= e[2]) return;
      // Its promise fails with the transaction's, which is handled below.
      db.put(code, e).catch(ignoreFailure);
    });
    if (p !== this.lastWrite) {
      this.lastWrite = p;
      p.catch(onCacheWriteError);
    }
  }

  private remember(code: string, e: CacheEntry): void {
    if (this.memory.size >= this.maxEntries) {
      // Insertion order: drop the oldest entry.
      for (const k of this.memory.keys()) {
        this.memory.delete(k);
        break;
      }
    }
    this.memory.set(code, e);
  }

  /**
   * Drops a code from this thread's memory, and this thread's LMDB snapshot with it. lmdb-js keeps
   * a thread's read snapshot until a timer of its own, so an invalidation handled in the same
   * event-loop turn as an earlier read would otherwise let the next lookup find the old entry in
   * that snapshot, not the tombstone, and remember it for a whole TTL.
   */
  forget(code: string): void {
    this.memory.delete(code);
    this.db.resetReadTxn();
  }

  /**
   * Replaces a code's shared entry with a tombstone of `atMs`, synchronously, so that the next
   * read misses and no fill read before `atMs` lands after it. Call it after the change is
   * committed.
   */
  invalidateShared(code: string, atMs = Date.now()): void {
    this.db.putSync(code, ['', TOMBSTONE, atMs, 0]);
  }

  get memorySize(): number {
    return this.memory.size;
  }
}

/** A code whose entry every HTTP thread must drop from its memory. */
export const REDIRECT_INVALIDATION = topic<{ code: string }>('links.redirect-cache');

/** Invalidation of the memory level across the HTTP threads of this process, acknowledged. */
export class CacheInvalidation {
  constructor(
    private readonly cache: RedirectCache,
    private readonly pubsub: PubSub,
  ) {
    pubsub.subscribe(REDIRECT_INVALIDATION, (m) => cache.forget(m.code));
  }

  /** Drops `code` from LMDB and every thread's memory; resolves once every peer acknowledged. */
  async invalidate(code: string): Promise<void> {
    this.cache.invalidateShared(code);
    this.cache.forget(code);
    await this.pubsub.publishAndWait(REDIRECT_INVALIDATION, { code });
  }
}
