// The search scenarios:
//   search   GET /api/search per tier (recent, relevance) against the timeline read rate measured
//            in the same rounds on the same server (timeline-server.ts: 32 readers, 10 authors),
//            over a corpus of 20,000 more posts; then indexing throughput: 50,000 posts made
//            before the start, indexed through the outbox consumers, the shared budget and the
//            engine's queue, in posts per second, beside `perch reindex` on the same posts;
//   suggest  GET /api/suggest latency (p50) with 1,000 versus 1,000,000 distinct past queries,
//            over HTTP (one connection, one request at a time) and of the lookup alone.
import http from 'node:http';
import { openSqlite, type Sqlite } from '../src/store/sqlite';
import { openHotStore } from '../src/store/lmdb';
import { migrateAll } from '../src/capabilities';
import { loadConfig } from '../src/config';
import { halfLifeMs } from '../src/core/decay';
import { rebuildIndex } from '../src/search/rebuild';
import { IndexSourceStore, QueryCountStore, SearchIndexStore, openSearchDb } from '../src/search/store';
import { SuggestionIndex } from '../src/search/suggestions';
import { atMost, round3, type BenchContext, type PerchTarget, type Row, type ScenarioResult } from './context';
import { largerPeak, type MemoryPeak } from './memory';
import { call, metricValue, metricsOf } from './http';
import { failures, type LoadOptions, type LoadSummary } from './load';
import { median, medianBy, percentile } from './median';
import { queryMix, seedPosts, seedUsers, seededInts, syntheticWords, zipfTexts } from './seed';
import { timelineServer, waitFor } from './timeline-server';

const CONNECTIONS = 32;

/** Limits high enough that the limiter is never what is measured (its cost per request stays). */
const UNLIMITED = {
  limits: { search: { recent: { capacity: 1_000_000_000, refill_per_second: 1_000_000 }, relevance: { capacity: 1_000_000_000, refill_per_second: 1_000_000 } } },
};

const VOCABULARY = 5000;

/** Loads whose connections each cycle through their own fixed list of requests, with one reader's key each. */
function keyedPaths(url: string, keys: readonly string[], paths: string[]): LoadOptions {
  // Built once per connection (autocannon rebuilds a request per send only when it has a
  // setupRequest hook): the same load generator cost for timeline and search requests.
  let client = 0;
  return {
    url,
    connections: CONNECTIONS,
    setupClient: (c) => {
      const k = client++;
      const headers = { authorization: `Bearer ${keys[k % keys.length]}` };
      const own = paths.map((_, i) => paths[(i + k * 17) % paths.length]);
      (c as unknown as { setRequests(r: unknown[]): void }).setRequests(own.map((path) => ({ method: 'GET', path, headers })));
    },
  };
}

/** The write queue's capacity a server has by default (config/default.json). */
const DEFAULT_QUEUE_CAPACITY = loadConfig({ env: {} }).search.queue_capacity;

export async function runSearch(ctx: BenchContext): Promise<ScenarioResult> {
  if (ctx.remote) ctx.skip('needs its corpus of 20,000 posts and a user who follows nobody in it, which only the data directory can seed');
  const tiers = await searchTiers(ctx);
  const postsToIndex = ctx.size(50_000, 500);
  const defaultQueue = await indexOnce(ctx, postsToIndex, DEFAULT_QUEUE_CAPACITY);
  const smallQueue = await indexOnce(ctx, postsToIndex, 1000);
  const indexingRow = (label: string, r: IndexRun): Row => ({
    measure: `indexing ${postsToIndex.toLocaleString('en-US')} posts, ${label}`,
    value: `${r.posts_per_second.toLocaleString('en-US')} posts/s`,
    goal: { text: 'none set' },
    memory: r.memory,
  });
  return {
    rows: [...tiers.rows, indexingRow(`queue of ${DEFAULT_QUEUE_CAPACITY.toLocaleString('en-US')} writes (the default)`, defaultQueue), indexingRow('smallest queue (1,000 writes)', smallQueue)],
    figures: { ...tiers.figures, indexing: { posts: postsToIndex, default_queue: defaultQueue, small_queue: smallQueue } },
  };
}

async function searchTiers(ctx: BenchContext): Promise<{ rows: Row[]; figures: Record<string, unknown> }> {
  const words = syntheticWords(VOCABULARY);
  const texts = zipfTexts(ctx.size(20_000, 300), words, 5);
  const { target, readers } = await timelineServer(ctx, {
    config: UNLIMITED,
    // Posts by a user nobody follows: in the index, in no timeline.
    seed: (db) => seedPosts(db, seedUsers(db, 'corpus', 1, false)[0].userId, texts, false),
  });
  const keys = readers.map((r) => r.key);
  const queries = queryMix(words, 500);
  const timeline = keyedPaths(target.url, keys, ['/api/timeline?limit=50']);
  const recent = keyedPaths(target.url, keys, queries.map((q) => `/api/search?q=${encodeURIComponent(q)}`));
  const relevance = keyedPaths(target.url, keys, queries.map((q) => `/api/search?q=${encodeURIComponent(q)}&sort=relevance`));
  const seconds = ctx.seconds(4);
  const rounds = ctx.rounds();
  await ctx.progress.step('the corpus indexed', () =>
    waitFor(async () => (await call(target.url, 'GET', '/api/search?q=' + words[0], { key: keys[0] })).json.items.length === Math.min(20, texts.length), 'the corpus index', 60_000),
  );
  const memory = ctx.watchMemory(target);
  // Every query once, and a second of each load, before measuring.
  if (ctx.warmup(1) > 0) {
    await ctx.load('search warm-up, timeline', { ...timeline, duration: 1 });
    await ctx.load('search warm-up, plain tier', { ...recent, duration: 1 });
    await ctx.load('search warm-up, relevance tier', { ...relevance, duration: 1 });
  }
  const all: Array<{ timeline: LoadSummary; recent: LoadSummary; relevance: LoadSummary }> = [];
  for (let r = 1; r <= rounds; r++) {
    const label = `search round ${r}/${rounds}`;
    all.push({
      timeline: await ctx.load(`${label}, timeline reads`, { ...timeline, duration: seconds }),
      recent: await ctx.load(`${label}, plain tier (sort=recent)`, { ...recent, duration: seconds }),
      relevance: await ctx.load(`${label}, relevance tier`, { ...relevance, duration: seconds }),
    });
  }
  const peak = memory?.stop();
  const mid = medianBy(all, (x) => x.recent.rps / x.timeline.rps);
  const sample = await call(target.url, 'GET', '/api/search?q=' + words[0], { key: keys[0] });
  const failed = all.reduce((n, x) => n + failures(x.timeline) + failures(x.recent) + failures(x.relevance), 0);
  const tierRow = (label: string, s: LoadSummary): Row => ({
    measure: `GET /api/search, ${label} tier vs timeline reads`,
    rps: s.rps,
    p50_ms: s.p50_ms,
    p99_ms: s.p99_ms,
    errors: failed,
    baseline_rps: mid.timeline.rps,
    ratio: s.rps / mid.timeline.rps,
    goal: { text: 'none set' },
    memory: peak,
  });
  return {
    rows: [tierRow('plain (sort=recent)', mid.recent), tierRow('relevance', mid.relevance)],
    figures: {
      connections: CONNECTIONS,
      corpus_posts: texts.length,
      rounds: all.length,
      timeline_rps: Math.round(mid.timeline.rps),
      recent_rps: Math.round(mid.recent.rps),
      relevance_rps: Math.round(mid.relevance.rps),
      recent_to_timeline: round3(mid.recent.rps / mid.timeline.rps),
      relevance_to_timeline: round3(mid.relevance.rps / mid.timeline.rps),
      round_recent_to_timeline: all.map((x) => round3(x.recent.rps / x.timeline.rps)),
      round_relevance_to_timeline: all.map((x) => round3(x.relevance.rps / x.timeline.rps)),
      recent_p50_ms: mid.recent.p50_ms,
      recent_p99_ms: mid.recent.p99_ms,
      relevance_p50_ms: mid.relevance.p50_ms,
      relevance_p99_ms: mid.relevance.p99_ms,
      common_word_matches: sample.json.next_cursor === null ? sample.json.items.length : '20+',
      failed,
      memory: peak,
    },
  };
}

interface IndexRun {
  queue_capacity: number;
  indexed_posts: number;
  seconds: number;
  posts_per_second: number;
  bulk_requests: number;
  rejections: number;
  budget_decreases: number;
  final_budget: { batch: number; rate: number };
  reindex_posts_per_second: number;
  memory?: MemoryPeak;
}

/**
 * `posts` posts made before the start, indexed by a server through the outbox consumers, the
 * shared budget and the engine's queue (of `queueCapacity` writes), timed from the moment it
 * listens (its background jobs start then) until every post is applied to the index.
 */
async function indexOnce(ctx: BenchContext, posts: number, queueCapacity: number): Promise<IndexRun> {
  const dir = ctx.tempDir('perch-bench-index-');
  await ctx.progress.step(`seeded ${posts.toLocaleString('en-US')} posts to index`, () => {
    const db = openSqlite(dir);
    migrateAll(db);
    // An index built while the store was empty, so the server starts without a rebuild and the
    // posts below reach the engine through the outbox consumers.
    const empty = new SearchIndexStore(openSearchDb(dir));
    rebuildIndex(new IndexSourceStore(db), empty);
    empty.db.close();
    const [author] = seedUsers(db, 'corpus', 1, false);
    seedPosts(db, author.userId, zipfTexts(posts, syntheticWords(VOCABULARY), 7), true);
    db.close();
  });
  const target: PerchTarget = await ctx.startPerch(dir, { search: { queue_capacity: queueCapacity } });
  const started = performance.now();
  const memory = ctx.watchMemory(target);
  let metrics = '';
  const elapsed = await ctx.progress.timed(
    `indexing, queue of ${queueCapacity.toLocaleString('en-US')} writes`,
    Math.max(1, Math.round(posts / 10_000)),
    async (report) => {
      await waitFor(
        async () => {
          metrics = await metricsOf(target.url);
          report(`${metricValue(metrics, 'perch_search_indexed_writes_total').toLocaleString('en-US')} indexed`);
          return metricValue(metrics, 'perch_search_indexed_writes_total') >= posts && metricValue(metrics, 'perch_search_queue_depth') === 0;
        },
        'the index',
        120_000,
      );
      return (performance.now() - started) / 1000;
    },
    (s) => `${Math.round(posts / s).toLocaleString('en-US')} posts/s`,
  );
  const peak = memory?.stop();
  const status = JSON.parse((await target.server!.cli(['status', '--json'])).stdout).search as { indexed_posts: number };
  await ctx.stopPerch(target);
  const rebuilt = JSON.parse((await target.server!.cli(['reindex', '--json'])).stdout) as { posts: number; seconds: number };
  return {
    queue_capacity: queueCapacity,
    indexed_posts: status.indexed_posts,
    seconds: Number(elapsed.toFixed(2)),
    posts_per_second: Math.round(posts / elapsed),
    bulk_requests: metricValue(metrics, 'perch_search_bulk_requests_total'),
    rejections: metricValue(metrics, 'perch_search_bulk_rejections_total'),
    budget_decreases: metricValue(metrics, 'perch_search_budget_decreases_total'),
    final_budget: { batch: metricValue(metrics, 'perch_search_budget_batch'), rate: metricValue(metrics, 'perch_search_budget_rate') },
    reindex_posts_per_second: Math.round(rebuilt.posts / Math.max(rebuilt.seconds, 0.001)),
    memory: peak,
  };
}

/** `n` distinct two-word queries over a vocabulary of 1,000 words (all 1,000,000 pairs at most). */
function* distinctQueries(n: number, words: string[]): Generator<string> {
  const total = words.length * words.length;
  // Visit the pairs in a scattered order: a step coprime with the total.
  const step = 999_983;
  for (let i = 0, at = 0; i < n; i++, at = (at + step) % total) yield `${words[Math.floor(at / words.length)]} ${words[at % words.length]}`;
}

function seedCounts(db: Sqlite, n: number, words: string[]): string[] {
  const rand = seededInts(13);
  const now = Date.now();
  const insert = db.prepare('INSERT INTO search_query_counts (query, count, updated_ms) VALUES (?, ?, ?)');
  const sample: string[] = [];
  db.transaction(() => {
    let i = 0;
    for (const q of distinctQueries(n, words)) {
      insert.run(q, 1 + rand(1000), now - rand(86_400_000));
      if (i++ % Math.max(1, Math.floor(n / 2000)) === 0) sample.push(q);
    }
  })();
  return sample;
}

/** Latencies in microseconds of `n` requests one at a time on one connection, cycling through `paths`. */
async function httpLatencies(url: string, paths: string[], n: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await new Promise<void>((resolve, reject) => {
        http
          .get(url + paths[i % paths.length], { agent }, (res) => {
            if (res.statusCode !== 200) reject(new Error(`suggest: ${res.statusCode}`));
            res.resume();
            res.on('end', resolve);
          })
          .on('error', reject);
      });
      out.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  } finally {
    agent.destroy();
  }
  return out;
}

interface SuggestRun {
  distinct_queries: number;
  listed_prefixes?: number;
  seed_seconds?: number;
  rebuild_seconds?: number;
  lookup_p50_us?: number;
  lookup_p99_us?: number;
  http_p50_us: number;
  http_p99_us: number;
  http_rps: number;
  http_p99_ms_at_32: number;
  http_failures: number;
  memory?: MemoryPeak;
}

/** HTTP latency one request at a time, then the rate at 32 connections, over `prefixes`. */
async function suggestOverHttp(ctx: BenchContext, target: PerchTarget, prefixes: string[], label: string): Promise<Omit<SuggestRun, 'distinct_queries'>> {
  const paths = prefixes.map((p) => `/api/suggest?prefix=${encodeURIComponent(p)}`);
  const memory = ctx.watchMemory(target);
  const count = ctx.size(20_000, 300);
  const latencies = await ctx.progress.timed(
    `suggest ${label}: ${count.toLocaleString('en-US')} requests one at a time`,
    Math.max(1, Math.round(count / 5000)),
    async () => {
      await httpLatencies(target.url, paths, ctx.size(3000, 100));
      return (await httpLatencies(target.url, paths, count)).sort((a, b) => a - b);
    },
    (l) => `p50 ${percentile(l, 0.5).toFixed(1)} µs, p99 ${percentile(l, 0.99).toFixed(1)} µs`,
  );
  let i = 0;
  const rate = await ctx.load(`suggest ${label}: ${CONNECTIONS} connections`, { url: target.url, connections: CONNECTIONS, duration: ctx.seconds(4), requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }] });
  return {
    http_p50_us: Number(percentile(latencies, 0.5).toFixed(1)),
    http_p99_us: Number(percentile(latencies, 0.99).toFixed(1)),
    http_rps: Math.round(rate.rps),
    http_p99_ms_at_32: rate.p99_ms,
    http_failures: failures(rate),
    memory: memory?.stop(),
  };
}

async function suggestAt(ctx: BenchContext, distinct: number): Promise<SuggestRun> {
  const words = syntheticWords(1000, 21);
  const dir = ctx.tempDir('perch-bench-suggest-');
  const db = openSqlite(dir);
  migrateAll(db);
  const seedStart = performance.now();
  const sample = await ctx.progress.step(`seeded ${distinct.toLocaleString('en-US')} past queries`, () => seedCounts(db, distinct, words));
  // The lists are built here with the server's own rebuild (what it runs at start when they are
  // missing), so the server starts at once.
  const hot = openHotStore(dir);
  const suggestions = new SuggestionIndex(hot);
  const H = halfLifeMs(24);
  const rebuildStart = performance.now();
  const built = await ctx.progress.step('scored them into the per-prefix lists', () => suggestions.rebuild(new QueryCountStore(db).sorted(), H));
  const rebuildSeconds = (performance.now() - rebuildStart) / 1000;
  db.close();
  // Prefixes of one to eight characters of sampled past queries: short ones shared by many.
  const rand = seededInts(17);
  const prefixes: string[] = [];
  for (let i = 0; i < 2000; i++) {
    const q = sample[rand(sample.length)];
    prefixes.push(q.slice(0, 1 + rand(Math.min(8, q.length))));
  }
  // The lookup alone, in this process.
  const now = Date.now();
  for (let i = 0; i < ctx.size(20_000, 1000); i++) suggestions.lookup(prefixes[i % prefixes.length], 10, now, H);
  const lookups: number[] = [];
  for (let i = 0; i < ctx.size(50_000, 2000); i++) {
    const t0 = process.hrtime.bigint();
    suggestions.lookup(prefixes[i % prefixes.length], 10, now, H);
    lookups.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  lookups.sort((a, b) => a - b);
  await hot.close();
  const target = await ctx.startPerch(dir);
  const overHttp = await suggestOverHttp(ctx, target, prefixes, `with ${distinct.toLocaleString('en-US')} past queries`);
  await ctx.stopPerch(target);
  return {
    distinct_queries: distinct,
    listed_prefixes: built.lists,
    seed_seconds: Number(((rebuildStart - seedStart) / 1000).toFixed(1)),
    rebuild_seconds: Number(rebuildSeconds.toFixed(1)),
    lookup_p50_us: Number(median(lookups).toFixed(2)),
    lookup_p99_us: Number(percentile(lookups, 0.99).toFixed(2)),
    ...overHttp,
  };
}

export async function runSuggest(ctx: BenchContext): Promise<ScenarioResult> {
  if (ctx.remote) {
    // The running server's own lists: its latency, but no comparison of store sizes.
    const target = ctx.remoteTarget();
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const prefixes = [...letters].flatMap((a) => [a, ...[...'aeiou'].map((b) => a + b)]);
    const run = await suggestOverHttp(ctx, target, prefixes, 'on the running server');
    ctx.notes.push('with --url, latency over the server\'s own suggestion lists (prefixes a–z and a vowel after each); the 1,000 vs 1,000,000 comparison needs seeded past queries');
    return {
      rows: [{ measure: 'GET /api/suggest, one at a time (server\'s own lists)', rps: run.http_rps, p50_ms: run.http_p50_us / 1000, p99_ms: run.http_p99_us / 1000, errors: run.http_failures, goal: { text: 'p50 ratio ≤ 1.2 (not measured)' }, memory: run.memory }],
      figures: { running_server: run },
    };
  }
  const small = await suggestAt(ctx, 1000);
  const large = await suggestAt(ctx, Math.min(1_000_000, ctx.size(1_000_000, 5000)));
  const ratio = large.http_p50_us / small.http_p50_us;
  return {
    rows: [
      {
        measure: `GET /api/suggest p50, ${large.distinct_queries.toLocaleString('en-US')} vs 1,000 past queries`,
        rps: large.http_rps,
        p50_ms: large.http_p50_us / 1000,
        p99_ms: large.http_p99_us / 1000,
        errors: small.http_failures + large.http_failures,
        ratio,
        goal: atMost(1.2, ratio, 'p50 ratio ≤ 1.2'),
        memory: largerPeak(small.memory, large.memory),
      },
    ],
    figures: { small, large, http_p50_ratio: round3(ratio), lookup_p50_ratio: round3(large.lookup_p50_us! / small.lookup_p50_us!) },
  };
}
