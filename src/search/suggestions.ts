// Suggestions in LMDB: the score of every past query (core/decay.ts, rankScore), keyed by the
// query, and the top-K list of every prefix shared by more than K queries, keyed by the prefix
// (core/suggestions.ts). A lookup is one read of the prefix's list, or, for a prefix that has no
// list, a read of the at most K + 1 queries that start with it: its cost depends on the prefix,
// not on how many queries share it. Only the counting task (one at a time) and the rebuild at
// start-up write here, so a drain can read what it needs outside its write transaction and write
// everything, stream entries removed included, in one short transaction.
import { rankScore, type DecayedCount } from '../core/decay';
import { MAX_PREFIX_CHARS } from '../core/search-query';
import { TOP_K, byScore, listedPrefixes, mergeTopK, prefixesOf, rankSuggestions, type Scored, type Suggestion } from '../core/suggestions';
import type { HotStore, LmdbDb } from '../store/lmdb';
import type { StreamBatch, StreamKey } from './query-stream';

export const SUGGEST_QUERIES_DB = 'search_suggest_queries';
export const SUGGEST_LISTS_DB = 'search_suggest_lists';
export const SUGGEST_META_DB = 'search_suggest_meta';

interface SuggestMeta {
  /** The half-life the scores were computed with: a different one needs a rebuild. */
  halfLifeMs: number;
  builtAt: string;
}

/** Writes per transaction of a rebuild: the LMDB write lock is shared by the whole box. */
const REBUILD_CHUNK = 5000;

export class SuggestionIndex {
  readonly queries: LmdbDb<number, string>;
  readonly lists: LmdbDb<Scored[], string>;
  private readonly meta: LmdbDb<SuggestMeta, string>;

  constructor(private readonly hot: HotStore) {
    this.queries = hot.db<number, string>(SUGGEST_QUERIES_DB);
    this.lists = hot.db<Scored[], string>(SUGGEST_LISTS_DB);
    this.meta = hot.db<SuggestMeta, string>(SUGGEST_META_DB);
  }

  lookup(prefix: string, limit: number, nowMs: number, halfLifeMs: number): Suggestion[] {
    const list = this.lists.get(prefix);
    return rankSuggestions(list ?? this.queriesStartingWith(prefix, TOP_K + 1), nowMs, halfLifeMs, limit);
  }

  /** Up to `max` queries starting with `prefix`, best first. */
  private queriesStartingWith(prefix: string, max: number): Scored[] {
    const out: Scored[] = [];
    for (const { key, value } of this.queries.getRange({ start: prefix, limit: max })) {
      if (!key.startsWith(prefix)) break;
      out.push([key, value]);
    }
    return out.sort(byScore);
  }

  /** Whether the stored scores were made with another half-life, or never made. */
  needsRebuild(halfLifeMs: number): boolean {
    return this.meta.get('meta')?.halfLifeMs !== halfLifeMs;
  }

  /** Queries with a score. */
  size(): number {
    return (this.queries.getStats() as { entryCount: number }).entryCount;
  }

  /**
   * Applies new scores (they only ever grow) to the queries and to every prefix list they belong
   * to, and removes the stream entries they were counted from, in one transaction. A prefix
   * without a list gets one when a new query makes it shared by more than K queries; prefixes are
   * visited shortest first, and a prefix with no list whose parent stays unlisted stays unlisted
   * too (it is shared by no more queries than its parent).
   */
  apply(scores: ReadonlyMap<string, number>, stream?: { db: LmdbDb<StreamBatch, StreamKey>; keys: readonly StreamKey[] }): void {
    this.queries.resetReadTxn();
    const byPrefix = new Map<string, { updates: Scored[]; added: number }>();
    for (const [query, score] of scores) {
      const added = this.queries.get(query) === undefined ? 1 : 0;
      for (const p of prefixesOf(query, MAX_PREFIX_CHARS)) {
        let entry = byPrefix.get(p);
        if (!entry) byPrefix.set(p, (entry = { updates: [], added: 0 }));
        entry.updates.push([query, score]);
        entry.added += added;
      }
    }
    const writes = new Map<string, Scored[]>();
    const unlisted = new Set<string>();
    const prefixes = [...byPrefix.keys()].sort((a, b) => a.length - b.length);
    for (const p of prefixes) {
      const { updates, added } = byPrefix.get(p)!;
      const list = this.lists.get(p);
      if (list) {
        const merged = mergeTopK(list, updates, TOP_K);
        if (merged) writes.set(p, merged);
        continue;
      }
      const parent = prefixesOf(p, MAX_PREFIX_CHARS).at(-2);
      if (added === 0 || (parent !== undefined && unlisted.has(parent))) {
        unlisted.add(p);
        continue;
      }
      // The queries already stored under p (at most K + 1 are needed to tell), with this batch's
      // scores: a prefix that had no list had at most K of them.
      const stored = this.queriesStartingWith(p, TOP_K + 1);
      const merged = mergeTopK(stored, updates, Infinity) ?? stored;
      if (merged.length > TOP_K) writes.set(p, merged.slice(0, TOP_K));
      else unlisted.add(p);
    }
    this.hot.root.transactionSync(() => {
      for (const [query, score] of scores) this.queries.putSync(query, score);
      for (const [p, list] of writes) this.lists.putSync(p, list);
      if (stream) for (const key of stream.keys) stream.db.removeSync(key);
    });
  }

  /**
   * Removes forgotten queries (forgetting.ts) and, in the same transaction, the list of every
   * prefix of theirs whose best entry is `faded` too: the list is sorted best first, so every
   * query under that prefix has faded and is being forgotten. A list whose best entry lives on
   * keeps its faded entries: they are below every live query under the prefix, and a lookup
   * leaves out what rounds to a volume of 0. Returns the number of lists removed.
   */
  forget(queries: readonly string[], faded: (score: number) => boolean): number {
    this.lists.resetReadTxn();
    const prefixes = new Set<string>();
    for (const query of queries) for (const p of prefixesOf(query, MAX_PREFIX_CHARS)) prefixes.add(p);
    const emptied: string[] = [];
    for (const p of prefixes) {
      const list = this.lists.get(p);
      if (list && (list.length === 0 || faded(list[0][1]))) emptied.push(p);
    }
    this.hot.root.transactionSync(() => {
      for (const query of queries) this.queries.removeSync(query);
      for (const p of emptied) this.lists.removeSync(p);
    });
    return emptied.length;
  }

  /**
   * Replaces everything with the scores of `counts` (every query, sorted by query), in chunks of
   * transactions; returns the number of queries and of listed prefixes.
   */
  rebuild(counts: Iterable<[query: string, count: number, updatedMs: number]>, halfLifeMs: number): { queries: number; lists: number } {
    const root = this.hot.root;
    root.transactionSync(() => {
      this.queries.clearSync();
      this.lists.clearSync();
      this.meta.removeSync('meta');
    });
    let queries = 0;
    let lists = 0;
    let chunk: Array<() => void> = [];
    const flush = () => {
      const writes = chunk;
      chunk = [];
      root.transactionSync(() => {
        for (const w of writes) w();
      });
    };
    const self = this;
    function* scored(): Generator<Scored> {
      for (const [query, count, updatedMs] of counts) {
        const c: DecayedCount = { count, updatedMs };
        const score = rankScore(c, halfLifeMs);
        chunk.push(() => self.queries.putSync(query, score));
        queries++;
        if (chunk.length >= REBUILD_CHUNK) flush();
        yield [query, score];
      }
    }
    for (const [prefix, top] of listedPrefixes(scored(), TOP_K, MAX_PREFIX_CHARS)) {
      chunk.push(() => this.lists.putSync(prefix, top));
      lists++;
      if (chunk.length >= REBUILD_CHUNK) flush();
    }
    flush();
    this.meta.putSync('meta', { halfLifeMs, builtAt: new Date().toISOString() });
    return { queries, lists };
  }
}
