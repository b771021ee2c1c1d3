// The search capability: full-text search of posts in an embedded engine (SQLite FTS5 in
// search.db, embedded-engine.ts), kept up to date by an indexing consumer of the outbox in
// partitions that share one adaptive write budget (indexer.ts, budget.ts); and query suggestions
// from decaying counts of every search (query-stream.ts, counting.ts, suggestions.ts).
// docs/search.md has the decisions and their reasons.
import type { Capability } from '../capability';
import { log } from '../log';
import { halfLifeMs } from '../core/decay';
import { BUDGET_LIMITS } from '../core/write-budget';
import type { OutboxConsumer } from '../outbox/consumer';
import { outboxOf } from '../outbox/store';
import type { BackgroundContext } from '../server/background';
import { SocialStore } from '../social/store';
import { SharedBudget } from './budget';
import { INDEX_PARTITIONS, type IndexResult } from './indexer';
import type { RebuildResult } from './rebuild';
import { APPLY_PER_TRANSACTION } from './embedded-engine';
import { MIGRATIONS } from './migrations';
import { QueryStream, openQueryStream, queryStreamDepth } from './query-stream';
import { RelevanceSnapshots, snapshotCount, sweepSnapshots } from './relevance-snapshots';
import { SearchService } from './service';
import { QueryCountStore, SearchIndexStore, openSearchDb } from './store';
import { SuggestionIndex } from './suggestions';
import { SEARCH_TASKS, indexTaskName } from './tasks';

// Its routes are loaded by the HTTP threads alone, when they make them: the writer thread takes
// this module's operations and jobs and serves no route, and the routes' request schemas bring zod.
const routesModule = () => require('./routes') as typeof import('./routes');

/** The outbox position of an indexing partition; the partition count is in the name, so a change of it starts afresh. */
export function indexConsumerName(partition: number): string {
  return `search_index_${partition}_of_${INDEX_PARTITIONS}`;
}

/** Raised in the supervisor when the indexer had writes accepted into the engine's queue. */
export const SEARCH_QUEUED_SIGNAL = 'search.queued';

/**
 * While posts keep coming (a task that did its whole range found `STREAM_TASK_WRITES` or more),
 * the next task starts no sooner than this after the last one's start: each task is a bulk
 * request, a synced transaction in the engine, and a wake-up of the pool thread, whatever its
 * size, so a steady stream costs less in fewer, larger tasks. A post still becomes searchable well
 * within the contract's 5 s. A backlog is unaffected: full batches go back to back, and a task the
 * budget stopped waits for the budget.
 */
const STREAM_GAP_MS = 250;
const STREAM_TASK_WRITES = 16;

function streaming(last: IndexResult): boolean {
  return !last.rejected && last.waitMs === 0 && last.writes >= STREAM_TASK_WRITES;
}

export const INDEX_CONSUMERS: ReadonlyArray<OutboxConsumer<IndexResult>> = Array.from({ length: INDEX_PARTITIONS }, (_, p) => ({
  name: indexConsumerName(p),
  tasks: SEARCH_TASKS,
  task: indexTaskName(p),
  batch: 2000,
  // Woken when new events are durable (the outbox signal), at most once a period; a task that the
  // budget stopped runs again once its gap is over.
  everyMs: 50,
  // The next task waits for the budget's schedule, or for the back-off after a rejection; after
  // a task that did its whole range and found a stream of posts in it, at least STREAM_GAP_MS.
  gapMs: (last) => (last ? Math.max(last.elapsedMs + last.waitMs, streaming(last) ? STREAM_GAP_MS : 0) : 0),
  // The position moves only past what the engine accepted.
  doneUpTo: (result) => result.upTo,
  // Accepted writes wait in the engine's queue: the apply job looks at it.
  afterTask: (result, ctx) => {
    if (result.writes > 0) ctx.signals.raise(SEARCH_QUEUED_SIGNAL);
  },
}));

/**
 * The apply job looks at the engine's write queue when the indexer had writes accepted (the
 * signal), at most once a period, and once a tick besides, for writes queued by another process
 * and for an apply that failed. It does not poll: a server at rest never wakes for it.
 */
const APPLY_LOOK_EVERY_MS = 50;
const APPLY_TICK_MS = 1000;
/** The most one apply task runs. */
const APPLY_RUN_MS = 200;
/**
 * Queued writes are applied once as many wait as the write budget still counts as no backlog (a
 * tenth of the queue, core/write-budget.ts: up to there it keeps growing) or a transaction's worth
 * (APPLY_PER_TRANSACTION), whichever is less, or once they have waited this long. Each apply
 * transaction becomes one FTS5 segment, and FTS5 merges small segments into larger ones again and
 * again as the index grows: applying every 50 ms under a post load made segments of about a
 * thousand posts, which cost each post more to index than larger ones (bench/HISTORY.md). A post
 * is still searchable within a fraction of a second, well within the five the contract allows.
 */
export const APPLY_WAIT_MS = 250;

/** Queued writes that are applied without waiting for APPLY_WAIT_MS, for a queue of `capacity`. */
export function applyAtDepth(capacity: number): number {
  return Math.max(1, Math.min(APPLY_PER_TRANSACTION, Math.floor(capacity * BUDGET_LIMITS.shallowQueue)));
}

/**
 * Whether the `depth` queued writes, the first seen `waitedMs` ago, are applied now: enough of
 * them wait, they waited long enough, or the server stops (its last run leaves nothing queued).
 */
export function applyDue(depth: number, waitedMs: number, applyAt: number, final: boolean): boolean {
  return depth > 0 && (final || depth >= applyAt || waitedMs >= APPLY_WAIT_MS);
}

/** How often the query stream is counted: well within the minute a new query may take to appear. */
const COUNT_EVERY_MS = 1000;
/**
 * How often the queries whose counts have faded are forgotten (forgetting.ts). The first pass is
 * one period after start, so a server that just started wakes no pool thread for it.
 */
const FORGET_EVERY_MS = 60 * 60 * 1000;
/** How often relevance rankings older than their TTL are removed. */
const SWEEP_EVERY_MS = 60_000;

/** The supervisor's own connection to the engine's database, for its checks and gauges. */
const supervisorIndexes = new WeakMap<BackgroundContext, SearchIndexStore>();
function supervisorIndex(ctx: BackgroundContext): SearchIndexStore {
  let s = supervisorIndexes.get(ctx);
  if (!s) supervisorIndexes.set(ctx, (s = new SearchIndexStore(openSearchDb(ctx.dataDir))));
  return s;
}

export const search: Capability = {
  name: 'search',
  migrations: MIGRATIONS,
  tasks: SEARCH_TASKS,
  consumers: INDEX_CONSUMERS,
  signals: [SEARCH_QUEUED_SIGNAL],
  async prepare(ctx) {
    // The engine's database is made here, before any thread opens it. An index never built (a
    // new install, or posts made before search existed) is built from the posts once; the
    // consumers then replay the outbox they have not seen, which changes nothing it already has.
    if (supervisorIndex(ctx).meta('built_at') === undefined) {
      // Said before the wait, so that a long first start (or an upgrade's) explains itself.
      log.info('building the search index from the posts before listening');
      const built = (await ctx.runTask(SEARCH_TASKS, 'search.rebuildIndex')) as RebuildResult;
      log.info('search index built', { posts: built.posts, ms: Math.round(built.ms) });
    }
    // Suggestion lists are hot state: rebuilt from the stored counts when missing, or when the
    // half-life they were scored with changed.
    if (new SuggestionIndex(ctx.hot).needsRebuild(halfLifeMs(ctx.config.suggest.half_life_hours))) {
      await ctx.runTask(SEARCH_TASKS, 'search.rebuildSuggestions');
    }
  },
  jobs: (ctx) => {
    const stream = openQueryStream(ctx.hot);
    const applyAt = applyAtDepth(ctx.config.search.queue_capacity);
    /** When the supervisor first saw the queued writes that wait now (null: none wait). */
    let waitingSince: number | null = null;
    let lastForget = Date.now();
    let forgetAfter = '';
    return [
      {
        name: 'search.apply',
        everyMs: APPLY_LOOK_EVERY_MS,
        tickMs: APPLY_TICK_MS,
        wakeOn: ctx.signals.counter(SEARCH_QUEUED_SIGNAL),
        flushOnStop: true,
        async run(c, final) {
          const index = supervisorIndex(c);
          const depth = index.queueDepth();
          if (depth === 0) {
            waitingSince = null;
            return;
          }
          const now = performance.now();
          waitingSince ??= now;
          const waited = now - waitingSince;
          // Not due yet: the job looks again when they will have waited long enough.
          if (!applyDue(depth, waited, applyAt, final)) return Math.max(APPLY_LOOK_EVERY_MS, APPLY_WAIT_MS - waited);
          waitingSince = null;
          await c.runTask(SEARCH_TASKS, 'search.apply', { maxMs: APPLY_RUN_MS });
          // A run that ran out of time left writes queued: the next goes on after a period.
          if (!final && index.queueDepth() > 0) return APPLY_LOOK_EVERY_MS;
        },
      },
      {
        name: 'search.count',
        everyMs: COUNT_EVERY_MS,
        flushOnStop: true,
        async run(c, final) {
          if (queryStreamDepth(stream) > 0) await c.runTask(SEARCH_TASKS, 'search.count');
          // After the counting, in the same job, so that the two never write at once.
          if (final || Date.now() - lastForget < FORGET_EVERY_MS) return;
          const r = await c.runTask(SEARCH_TASKS, 'search.forget', { after: forgetAfter });
          // A pass that ran out of time goes on at the next tick, where it stopped.
          forgetAfter = r.done ? '' : r.after;
          if (r.done) lastForget = Date.now();
          if (r.forgotten > 0) log.info('faded search queries forgotten', { queries: r.forgotten, prefix_lists: r.lists });
        },
      },
      {
        name: 'search.sweepSnapshots',
        everyMs: SWEEP_EVERY_MS,
        run: (c) => sweepSnapshots(c.hot).then(() => undefined),
      },
    ];
  },
  gauges(figures, ctx) {
    const budget = new SharedBudget(ctx.hot);
    const stream = openQueryStream(ctx.hot);
    const capacity = ctx.config.search.queue_capacity;
    figures.gauge('perch_search_queue_depth', "Writes waiting in the search engine's write queue.", () => supervisorIndex(ctx).queueDepth());
    figures.gauge('perch_search_queue_capacity', "The most writes the search engine's write queue holds.", () => capacity);
    figures.gauge('perch_search_budget_batch', 'The indexing write budget: writes per bulk request, shared by every partition.', () => budget.read().batch);
    figures.gauge('perch_search_budget_rate', 'The indexing write budget: bulk requests per second, shared by every partition.', () => budget.read().rate);
    // Counted by the pool threads in the shared budget record; reported as they stand.
    const totals: Array<[string, string, (r: ReturnType<SharedBudget['read']>) => number]> = [
      ['perch_search_bulk_requests_total', 'Bulk requests the indexer sent to the search engine.', (r) => r.bulks],
      ['perch_search_bulk_rejections_total', 'Bulk requests the search engine rejected (queue full or unavailable).', (r) => r.rejections],
      ['perch_search_indexed_writes_total', 'Index and delete writes the search engine accepted.', (r) => r.accepted],
      ['perch_search_budget_decreases_total', 'Times the indexing write budget was halved.', (r) => r.decreases],
    ];
    for (const [name, help, value] of totals) figures.total(name, help, () => value(budget.read()));
    figures.labelledGauge('perch_search_index_lag_events', 'Outbox events not yet processed by an indexing partition.', 'partition', () => {
      const outbox = outboxOf(ctx.sqlite);
      return Array.from({ length: INDEX_PARTITIONS }, (_, p) => [String(p), outbox.lag(indexConsumerName(p)).events] as const);
    });
    figures.gauge('perch_search_relevance_snapshots', 'Relevance rankings kept for the next pages of their searches.', () => snapshotCount(ctx.hot));
    figures.gauge('perch_search_query_stream_entries', 'Batches of answered search queries not yet counted toward suggestions.', () => queryStreamDepth(stream));
  },
  http(ctx) {
    const index = new SearchIndexStore(openSearchDb(ctx.dataDir));
    const stream = new QueryStream(ctx.hot, ctx.nodeId);
    const service = new SearchService(
      index,
      new SocialStore(ctx.sqlite),
      new SuggestionIndex(ctx.hot),
      new RelevanceSnapshots(ctx.hot, ctx.nodeId),
      stream,
      halfLifeMs(ctx.config.suggest.half_life_hours),
    );
    return {
      routes: routesModule().searchRoutes(service, ctx.limits, ctx.cursors),
      async close() {
        await stream.close();
        index.db.close();
      },
    };
  },
  status({ config, sqlite, hot, dataDir }) {
    const index = new SearchIndexStore(openSearchDb(dataDir));
    try {
      const b = new SharedBudget(hot).read();
      const outbox = outboxOf(sqlite);
      const lag: Record<string, number> = {};
      for (let p = 0; p < INDEX_PARTITIONS; p++) lag[`partition_${p}`] = outbox.lag(indexConsumerName(p)).events;
      return {
        indexed_posts: index.documents(),
        queue: { depth: index.queueDepth(), capacity: config.search.queue_capacity },
        budget: { batch: b.batch, rate_per_second: b.rate, rejections: b.rejections },
        index_lag_events: lag,
        queries_counted: new QueryCountStore(sqlite).queries(),
      };
    } finally {
      index.db.close();
    }
  },
};
