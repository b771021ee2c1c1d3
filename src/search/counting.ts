// The counting task: moves the query stream (query-stream.ts) into the decaying counts in SQLite
// (migration 8) and the suggestion lists in LMDB (suggestions.ts), a batch at a time. Each batch
// is aggregated per query, then its counts are written in one SQLite transaction that also
// records which stream entries the batch came from; then the new scores go to LMDB in one
// transaction that also removes those entries. A crash between the two leaves entries that SQLite
// has already counted: the next run finds them through the recorded keys and only applies their
// queries' stored scores to LMDB, so every query is counted once.
import { addHits, rankScore } from '../core/decay';
import type { LmdbDb } from '../store/lmdb';
import type { StreamBatch, StreamKey } from './query-stream';
import type { QueryCountStore } from './store';
import type { SuggestionIndex } from './suggestions';

export interface CountingDeps {
  stream: LmdbDb<StreamBatch, StreamKey>;
  counts: QueryCountStore;
  suggestions: SuggestionIndex;
  halfLifeMs: number;
}

/** Queries per batch, at most: one SQLite transaction and one LMDB transaction each. */
const BATCH_QUERIES = 5000;

function queriesOf(batch: StreamBatch, into: Map<string, number[]>): number {
  let n = 0;
  for (let i = 0; i + 1 < batch.length; i += 2) {
    const query = batch[i] as string;
    let hits = into.get(query);
    if (!hits) into.set(query, (hits = []));
    hits.push(batch[i + 1] as number);
    n++;
  }
  return n;
}

/** Finishes a batch whose counts were committed but whose stream entries are still there. */
function finishInterrupted(deps: CountingDeps): void {
  const recorded = deps.counts.lastBatch();
  if (!recorded) return;
  const keys = (JSON.parse(recorded) as StreamKey[]).filter((k) => deps.stream.get(k) !== undefined);
  if (keys.length === 0) return;
  const queries = new Map<string, number[]>();
  for (const k of keys) queriesOf(deps.stream.get(k)!, queries);
  const scores = new Map<string, number>();
  for (const query of queries.keys()) {
    const c = deps.counts.get(query);
    if (c) scores.set(query, rankScore(c, deps.halfLifeMs));
  }
  deps.suggestions.apply(scores, { db: deps.stream, keys });
}

/** Counts what the stream holds, batch after batch, for at most `maxMs`; returns the queries counted. */
export function countQueries(deps: CountingDeps, maxMs = 1000): number {
  const deadline = performance.now() + maxMs;
  const { stream, counts, halfLifeMs } = deps;
  const db = counts.db;
  finishInterrupted(deps);
  let counted = 0;
  const commit = db.transaction((keys: StreamKey[], hits: Map<string, number[]>) => {
    const scores = new Map<string, number>();
    for (const [query, times] of hits) {
      const next = addHits(counts.get(query), times, halfLifeMs);
      counts.put(query, next);
      scores.set(query, rankScore(next, halfLifeMs));
    }
    counts.setLastBatch(JSON.stringify(keys));
    return scores;
  });
  while (performance.now() < deadline) {
    stream.resetReadTxn();
    const keys: StreamKey[] = [];
    const hits = new Map<string, number[]>();
    let n = 0;
    for (const { key, value } of stream.getRange({})) {
      keys.push(key as StreamKey);
      n += queriesOf(value, hits);
      if (n >= BATCH_QUERIES) break;
    }
    if (keys.length === 0) break;
    const scores = commit.immediate(keys, hits);
    deps.suggestions.apply(scores, { db: stream, keys });
    counted += n;
    if (n < BATCH_QUERIES) break;
  }
  return counted;
}
