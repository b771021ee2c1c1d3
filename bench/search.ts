// Search benchmarks:
//   search   GET /api/search per tier (recent, relevance) against the timeline read rate measured
//            in the same run on the same server (bench/timeline-server.ts: 32 readers, 10 authors),
//            over a corpus of 20,000 more posts; then indexing throughput: 50,000 posts made
//            before the start, indexed through the outbox consumers, the shared budget and the
//            engine's queue, in posts per second, beside `perch reindex` on the same posts;
//   suggest  GET /api/suggest latency (p50) with 1,000 versus 1,000,000 distinct past queries,
//            over HTTP (one connection, one request at a time) and of the lookup alone.
// Load is bounded: each autocannon run lasts `seconds` (default 4), servers listen on 127.0.0.1.
//   node dist/bench/search.js [search|index|suggest|all] [seconds=4] [rounds=3] [past-queries=1000000]
// (index: only the indexing half of search)
// (past-queries: the larger of the two suggestion stores; the smaller has 1,000)
import http from 'node:http';
import { rmSync } from 'node:fs';
import { startServer, tempDataDir } from '../test/helpers/server';
import { openSqlite, type Sqlite } from '../src/store/sqlite';
import { openHotStore } from '../src/store/lmdb';
import { migrateAll } from '../src/capabilities';
import { halfLifeMs } from '../src/core/decay';
import { rebuildIndex } from '../src/search/rebuild';
import { IndexSourceStore, QueryCountStore, SearchIndexStore, openSearchDb } from '../src/search/store';
import { SuggestionIndex } from '../src/search/suggestions';
import { autocannon, type LoadOptions } from './load';
import { median, medianBy } from './median';
import { seedPosts, seedUsers, seededInts, syntheticWords, zipfSampler } from './seed';
import { timelineServer, waitFor } from './timeline-server';

const scenario = process.argv[2] ?? 'all';
const seconds = Math.min(10, Number(process.argv[3] ?? 4));
const rounds = Number(process.argv[4] ?? 3);
const largeQueries = Math.min(1_000_000, Number(process.argv[5] ?? 1_000_000));
const CONNECTIONS = 32;

/** Limits high enough that the limiter is never what is measured (its cost per request stays). */
const UNLIMITED = {
  limits: { search: { recent: { capacity: 1_000_000_000, refill_per_second: 1_000_000 }, relevance: { capacity: 1_000_000_000, refill_per_second: 1_000_000 } } },
};

const VOCABULARY = 5000;

/** Post texts of 8 to 20 words drawn by Zipf's law from a synthetic vocabulary. */
function corpus(n: number, words: string[], seed: number): string[] {
  const rank = zipfSampler(words.length, seed);
  const rand = seededInts(seed + 1);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const w: string[] = [];
    for (let k = 0, len = 8 + rand(13); k < len; k++) w.push(words[rank()]);
    out.push(w.join(' '));
  }
  return out;
}

/**
 * A mix of queries: a common word (one of the 50 most frequent, in a large share of the posts),
 * two words of the 500 most frequent, or a rarer word.
 */
function queryMix(words: string[], n: number): string[] {
  const rand = seededInts(9);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const kind = rand(10);
    if (kind < 5) out.push(words[rand(50)]);
    else if (kind < 8) out.push(`${words[rand(500)]} ${words[rand(500)]}`);
    else out.push(words[500 + rand(words.length - 500)]);
  }
  return out;
}

async function load(opts: LoadOptions): Promise<{ rps: number; p50: number; p99: number; non2xx: number; errors: number }> {
  const r = await autocannon({ connections: CONNECTIONS, pipelining: 1, duration: seconds, ...opts });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

async function searchTiersBench(): Promise<Record<string, unknown>> {
  const words = syntheticWords(VOCABULARY);
  const texts = corpus(20_000, words, 5);
  const { dir, server, readers } = await timelineServer({
    config: UNLIMITED,
    // Posts by a user nobody follows: in the index, in no timeline.
    seed: (db) => seedPosts(db, seedUsers(db, 'corpus', 1, false)[0].userId, texts, false),
  });
  try {
    const queries = queryMix(words, 500);
    // Each connection cycles through its own fixed list of requests, built once (autocannon
    // rebuilds a request per send only when it has a setupRequest hook), with one reader's key:
    // the same load generator cost for timeline and search requests.
    const keyed = (paths: string[]): LoadOptions => {
      let client = 0;
      return {
        url: server.url,
        setupClient: (c) => {
          const k = client++;
          const headers = { authorization: `Bearer ${readers[k % readers.length].key}` };
          const own = paths.map((_, i) => paths[(i + k * 17) % paths.length]);
          (c as unknown as { setRequests(r: unknown[]): void }).setRequests(own.map((path) => ({ method: 'GET', path, headers })));
        },
      };
    };
    const timeline = keyed(['/api/timeline?limit=50']);
    const recent = keyed(queries.map((q) => `/api/search?q=${encodeURIComponent(q)}`));
    const relevance = keyed(queries.map((q) => `/api/search?q=${encodeURIComponent(q)}&sort=relevance`));
    // Every query once, and a second of each load, before measuring.
    await waitFor(async () => (await server.get('/api/search?q=' + words[0], { key: readers[0].key })).json.items.length === 20, 'the corpus index');
    for (const opts of [timeline, recent, relevance]) await load({ ...opts, duration: 1 });
    const all: Array<{ timeline: number; recent: number; relevance: number; recentP99: number; relevanceP99: number; failed: number }> = [];
    for (let r = 0; r < rounds; r++) {
      const t1 = await load(timeline);
      const rc = await load(recent);
      const rl = await load(relevance);
      all.push({ timeline: t1.rps, recent: rc.rps, relevance: rl.rps, recentP99: rc.p99, relevanceP99: rl.p99, failed: t1.non2xx + t1.errors + rc.non2xx + rc.errors + rl.non2xx + rl.errors });
    }
    const mid = medianBy(all, (x) => x.recent / x.timeline);
    const sample = await server.get('/api/search?q=' + words[0], { key: readers[0].key });
    return {
      scenario: 'search',
      connections: CONNECTIONS,
      corpus_posts: texts.length,
      rounds: all.length,
      timeline_rps: Math.round(mid.timeline),
      recent_rps: Math.round(mid.recent),
      relevance_rps: Math.round(mid.relevance),
      recent_to_timeline: Number((mid.recent / mid.timeline).toFixed(3)),
      relevance_to_timeline: Number((mid.relevance / mid.timeline).toFixed(3)),
      round_recent_to_timeline: all.map((x) => Number((x.recent / x.timeline).toFixed(3))),
      round_relevance_to_timeline: all.map((x) => Number((x.relevance / x.timeline).toFixed(3))),
      recent_p99_ms: mid.recentP99,
      relevance_p99_ms: mid.relevanceP99,
      common_word_matches: sample.json.next_cursor === null ? sample.json.items.length : '20+',
      failed: all.reduce((n, x) => n + x.failed, 0),
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function metricOf(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/**
 * `posts` posts made before the start, indexed by a server through the outbox consumers, the
 * shared budget and the engine's queue (of `queueCapacity` writes), timed from the moment it
 * listens (its background jobs start then) until every post is applied to the index.
 */
async function indexOnce(posts: number, queueCapacity: number): Promise<Record<string, unknown>> {
  const dir = tempDataDir('perch-bench-index-');
  const db = openSqlite(dir);
  migrateAll(db);
  // An index built while the store was empty, so the server starts without a rebuild and the
  // posts below reach the engine through the outbox consumers.
  const empty = new SearchIndexStore(openSearchDb(dir));
  rebuildIndex(new IndexSourceStore(db), empty);
  empty.db.close();
  const [author] = seedUsers(db, 'corpus', 1, false);
  seedPosts(db, author.userId, corpus(posts, syntheticWords(VOCABULARY), 7), true);
  db.close();
  const server = await startServer({ dataDir: dir, threads: 1, config: { search: { queue_capacity: queueCapacity } } });
  const started = performance.now();
  try {
    let metrics = '';
    await waitFor(
      async () => {
        metrics = (await server.get('/metrics')).text;
        return metricOf(metrics, 'perch_search_indexed_writes_total') >= posts && metricOf(metrics, 'perch_search_queue_depth') === 0;
      },
      'the index',
      120_000,
    );
    const elapsed = (performance.now() - started) / 1000;
    const status = JSON.parse((await server.cli(['status', '--json'])).stdout).search;
    await server.stop();
    const rebuilt = JSON.parse((await server.cli(['reindex', '--json'])).stdout) as { posts: number; seconds: number };
    return {
      queue_capacity: queueCapacity,
      indexed_posts: status.indexed_posts,
      seconds: Number(elapsed.toFixed(2)),
      posts_per_second: Math.round(posts / elapsed),
      bulk_requests: metricOf(metrics, 'perch_search_bulk_requests_total'),
      rejections: metricOf(metrics, 'perch_search_bulk_rejections_total'),
      budget_decreases: metricOf(metrics, 'perch_search_budget_decreases_total'),
      final_budget: { batch: metricOf(metrics, 'perch_search_budget_batch'), rate: metricOf(metrics, 'perch_search_budget_rate') },
      reindex_posts_per_second: Math.round(rebuilt.posts / rebuilt.seconds),
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Indexing with the default queue, and with the smallest queue allowed, where the budget has to back off. */
async function indexingBench(): Promise<Record<string, unknown>> {
  const posts = 50_000;
  return { scenario: 'search-indexing', posts, default_queue: await indexOnce(posts, 20_000), small_queue: await indexOnce(posts, 1000) };
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

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function suggestAt(distinct: number): Promise<Record<string, number>> {
  const words = syntheticWords(1000, 21);
  const dir = tempDataDir('perch-bench-suggest-');
  try {
    const db = openSqlite(dir);
    migrateAll(db);
    const seedStart = performance.now();
    const sample = seedCounts(db, distinct, words);
    // The lists are built here with the server's own rebuild (what it runs at start when they
    // are missing), so the server starts at once.
    const hot = openHotStore(dir);
    const suggestions = new SuggestionIndex(hot);
    const H = halfLifeMs(24);
    const rebuildStart = performance.now();
    const built = suggestions.rebuild(new QueryCountStore(db).sorted(), H);
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
    for (let i = 0; i < 20_000; i++) suggestions.lookup(prefixes[i % prefixes.length], 10, now, H);
    const lookups: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      const t0 = process.hrtime.bigint();
      suggestions.lookup(prefixes[i % prefixes.length], 10, now, H);
      lookups.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    lookups.sort((a, b) => a - b);
    await hot.close();
    const server = await startServer({ dataDir: dir, threads: 1 });
    try {
      const paths = prefixes.map((p) => `/api/suggest?prefix=${encodeURIComponent(p)}`);
      await httpLatencies(server.url, paths, 3000);
      const latencies = (await httpLatencies(server.url, paths, 20_000)).sort((a, b) => a - b);
      let i = 0;
      const rate = await autocannon({ url: server.url, connections: CONNECTIONS, duration: seconds, requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }] });
      return {
        distinct_queries: distinct,
        listed_prefixes: built.lists,
        seed_seconds: Number(((rebuildStart - seedStart) / 1000).toFixed(1)),
        rebuild_seconds: Number(rebuildSeconds.toFixed(1)),
        lookup_p50_us: Number(median(lookups).toFixed(2)),
        lookup_p99_us: Number(percentile(lookups, 0.99).toFixed(2)),
        http_p50_us: Number(percentile(latencies, 0.5).toFixed(1)),
        http_p99_us: Number(percentile(latencies, 0.99).toFixed(1)),
        http_rps: Math.round(rate.requests.average),
        http_non2xx: rate.non2xx,
      };
    } finally {
      await server.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function suggestBench(): Promise<Record<string, unknown>> {
  const small = await suggestAt(1000);
  const large = await suggestAt(largeQueries);
  return {
    scenario: 'suggest',
    small,
    large,
    http_p50_ratio: Number((large.http_p50_us / small.http_p50_us).toFixed(3)),
    lookup_p50_ratio: Number((large.lookup_p50_us / small.lookup_p50_us).toFixed(3)),
  };
}

async function main(): Promise<void> {
  const runs: Array<() => Promise<Record<string, unknown>>> = [];
  if (scenario === 'search' || scenario === 'all') runs.push(searchTiersBench);
  if (scenario === 'search' || scenario === 'index' || scenario === 'all') runs.push(indexingBench);
  if (scenario === 'suggest' || scenario === 'all') runs.push(suggestBench);
  if (runs.length === 0) throw new Error(`unknown scenario ${scenario}: search, index, suggest or all`);
  for (const run of runs) process.stdout.write(JSON.stringify(await run()) + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
  process.exit(1);
});
