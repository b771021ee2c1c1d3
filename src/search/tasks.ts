// Search's pool tasks: one indexing task per partition (the outbox consumers' tasks), applying the
// engine's queue to its index, counting the query stream, and the two rebuilds. Each pool thread
// opens what they use once, on its own connections.
import { halfLifeMs } from '../core/decay';
import type { OutboxRange } from '../outbox/consumer';
import type { TaskContext, TaskTable } from '../workers/context';
import { SharedBudget } from './budget';
import { countQueries } from './counting';
import { forgetQueries, type ForgetResult } from './forgetting';
import { EmbeddedEngine } from './embedded-engine';
import { INDEX_PARTITIONS, indexRange, type IndexResult } from './indexer';
import { openQueryStream } from './query-stream';
import { rebuildIndex, type RebuildResult } from './rebuild';
import { IndexSourceStore, QueryCountStore } from './store';
import { SuggestionIndex } from './suggestions';

/**
 * How long the pool's engine connection waits for the write lock. Short: the other holder is a
 * rebuild or another partition's request, and a request that cannot get in soon is better
 * answered as a rejection (the budget backs off) than left holding a pool thread.
 */
const ENGINE_BUSY_TIMEOUT_MS = 1000;

interface PoolSearch {
  engine: EmbeddedEngine;
  source: IndexSourceStore;
  budget: SharedBudget;
  counts: QueryCountStore;
  suggestions: SuggestionIndex;
}

const opened = new WeakMap<TaskContext, PoolSearch>();

function poolSearch(ctx: TaskContext): PoolSearch {
  let s = opened.get(ctx);
  if (!s) {
    s = {
      engine: EmbeddedEngine.open(ctx.dataDir, { capacity: ctx.config.search.queue_capacity, busyTimeoutMs: ENGINE_BUSY_TIMEOUT_MS }),
      source: new IndexSourceStore(ctx.sqlite),
      budget: new SharedBudget(ctx.hot),
      counts: new QueryCountStore(ctx.sqlite),
      suggestions: new SuggestionIndex(ctx.hot),
    };
    opened.set(ctx, s);
    const engine = s.engine;
    ctx.onEnd?.push(() => engine.close());
  }
  return s;
}

/** The task name of an indexing partition. */
export function indexTaskName(partition: number): string {
  return `search.index${partition}`;
}

const indexTasks: TaskTable = {};
for (let p = 0; p < INDEX_PARTITIONS; p++) {
  indexTasks[indexTaskName(p)] = (ctx: TaskContext, range: OutboxRange): Promise<IndexResult> => {
    const s = poolSearch(ctx);
    return indexRange({ source: s.source, engine: s.engine, budget: s.budget }, range, p);
  };
}

export const SEARCH_TASKS = {
  ...indexTasks,
  /** Applies the engine's queued writes to its index for at most `maxMs`; returns how many. */
  'search.apply': (ctx: TaskContext, p: { maxMs: number }): number => poolSearch(ctx).engine.applyQueued(p.maxMs),
  /** Counts the query stream into the decaying counts and the suggestion lists; returns the queries counted. */
  'search.count': (ctx: TaskContext): number => {
    const s = poolSearch(ctx);
    return countQueries({ stream: openQueryStream(ctx.hot), counts: s.counts, suggestions: s.suggestions, halfLifeMs: halfLifeMs(ctx.config.suggest.half_life_hours) });
  },
  /** Forgets the queries whose counts have faded (forgetting.ts), from after `after` on. */
  'search.forget': (ctx: TaskContext, p: { after: string }): ForgetResult => {
    const s = poolSearch(ctx);
    return forgetQueries({ counts: s.counts, suggestions: s.suggestions, halfLifeMs: halfLifeMs(ctx.config.suggest.half_life_hours) }, p.after);
  },
  /** Rebuilds the search index from the live posts. */
  'search.rebuildIndex': (ctx: TaskContext): RebuildResult => {
    const s = poolSearch(ctx);
    return rebuildIndex(s.source, s.engine.store);
  },
  /** Rebuilds the suggestion lists from the stored counts (a new half-life, or lost hot state). */
  'search.rebuildSuggestions': (ctx: TaskContext): { queries: number; lists: number } => {
    const s = poolSearch(ctx);
    return s.suggestions.rebuild(s.counts.sorted(), halfLifeMs(ctx.config.suggest.half_life_hours));
  },
};
