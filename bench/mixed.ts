// Mixed load: redirects while posts are being created, on one server. With one HTTP thread (the
// default) the writer's group commits, their checkpoints and the answers to posts all run on the
// event loop that serves redirects, and the fan-out runs beside it on the same two cores. This
// measures what a stream of posts costs the redirect path: each round runs the redirect load
// alone, then with a post load at a fixed rate from a second process, then alone again, and
// compares the middle run with the mean of the two around it.
//   node dist/bench/mixed.js [posts-per-second=2000] [seconds=4] [rounds=3]
// posts-per-second `max` posts as fast as 32 connections go. Load is bounded: every run lasts
// `seconds` (at most 10), servers listen on 127.0.0.1.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { startServer, tempDataDir } from '../test/helpers/server';
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { median, medianBy } from './median';
import { seedAuthorsWithFollowers, seedLinks } from './seed';
import { REDIRECT_CONNECTIONS, REDIRECT_LINKS, autocannon, postLoad, redirectLoad, type LoadResult } from './load';

const POST_CONNECTIONS = 32;

interface PostLoadSummary {
  rps: number;
  p50: number;
  p99: number;
  created: number;
  failed: number;
}

/** The post load, run in a process of its own so that it does not share a thread with the redirect load. */
async function runPostLoad(url: string, rate: number, seconds: number, keys: string[]): Promise<void> {
  const r = await autocannon({
    ...postLoad(url, keys),
    duration: seconds,
    connections: POST_CONNECTIONS,
    ...(rate > 0 ? { overallRate: rate } : {}),
  });
  const summary: PostLoadSummary = {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    created: r['2xx'],
    failed: r.non2xx + r.errors + r.timeouts,
  };
  process.stdout.write(JSON.stringify(summary) + '\n');
}

function startPostLoad(url: string, rate: number, seconds: number, keys: string[]): Promise<PostLoadSummary> {
  const proc = spawn(process.execPath, [__filename, 'post-load', url, String(rate), String(seconds)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  proc.stdin!.end(JSON.stringify(keys));
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`post load exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as PostLoadSummary);
    });
  });
}

interface Round {
  alone: LoadResult[];
  mixed: LoadResult;
  posts: PostLoadSummary;
  /** Redirects per second with the post load, over the mean of the two runs without. */
  ratio: number;
}

async function main(): Promise<void> {
  const rateArg = process.argv[2] ?? '2000';
  const rate = rateArg === 'max' ? 0 : Number(rateArg);
  const seconds = Math.min(10, Number(process.argv[3] ?? 4));
  const rounds = Number(process.argv[4] ?? 3);
  if (!(rate >= 0) || !(seconds > 0) || !(rounds >= 1)) throw new Error('usage: mixed.js [posts-per-second|max] [seconds] [rounds]');
  const dataDir = tempDataDir('perch-bench-mixed-');
  const db = openSqlite(dataDir);
  migrateAll(db);
  const codes = seedLinks(db, REDIRECT_LINKS);
  const authors = seedAuthorsWithFollowers(db, 50, 10);
  db.close();
  const keys = authors.map((a) => a.key);
  const server = await startServer({
    dataDir,
    threads: 1,
    config: {
      log: { level: 'warn' },
      // The loose per-IP limit would otherwise be what this measures: every request comes from 127.0.0.1.
      limits: { redirect: { capacity: 1_000_000_000, refill_per_second: 1_000_000_000 } },
    },
  });
  try {
    // Warm-up: JIT, connections, perch's link cache (each code read once from SQLite), and the post path.
    await redirectLoad(server.url, codes, 2);
    await startPostLoad(server.url, rate, 1, keys);
    const all: Round[] = [];
    for (let r = 0; r < rounds; r++) {
      const before = await redirectLoad(server.url, codes, seconds);
      // The post load starts first and ends last, so the whole redirect run has posts beside it.
      const posts = startPostLoad(server.url, rate, seconds + 1, keys);
      await new Promise((res) => setTimeout(res, 500));
      const mixed = await redirectLoad(server.url, codes, seconds);
      const postResult = await posts;
      const after = await redirectLoad(server.url, codes, seconds);
      const round: Round = { alone: [before, after], mixed, posts: postResult, ratio: mixed.requests.average / ((before.requests.average + after.requests.average) / 2) };
      all.push(round);
      process.stdout.write(
        `round ${r + 1}: redirects alone ${Math.round(before.requests.average)} / ${Math.round(after.requests.average)} req/s ` +
          `(p99 ${before.latency.p99} / ${after.latency.p99} ms), with posts ${Math.round(mixed.requests.average)} req/s ` +
          `(p99 ${mixed.latency.p99} ms) beside ${Math.round(postResult.rps)} posts/s (p99 ${postResult.p99} ms), ratio ${round.ratio.toFixed(3)}\n`,
      );
    }
    const mid = medianBy(all, (x) => x.ratio);
    const failures = all.reduce((n, x) => n + x.mixed.errors + x.mixed.timeouts + (x.mixed.non2xx - x.mixed['3xx']) + x.posts.failed, 0);
    process.stdout.write(
      JSON.stringify({
        scenario: 'mixed',
        posts_per_second_asked: rate === 0 ? 'max' : rate,
        redirect_connections: REDIRECT_CONNECTIONS,
        post_connections: POST_CONNECTIONS,
        seconds,
        rounds,
        round_ratios: all.map((x) => Number(x.ratio.toFixed(3))),
        ratio: Number(mid.ratio.toFixed(3)),
        redirects_alone_rps: mid.alone.map((x) => Math.round(x.requests.average)),
        redirects_with_posts_rps: Math.round(mid.mixed.requests.average),
        posts_rps: Math.round(mid.posts.rps),
        redirect_p50_ms_alone: median(mid.alone.map((x) => x.latency.p50)),
        redirect_p50_ms_with_posts: mid.mixed.latency.p50,
        redirect_p99_ms_alone: Math.max(...mid.alone.map((x) => x.latency.p99)),
        redirect_p99_ms_with_posts: mid.mixed.latency.p99,
        redirect_max_ms_with_posts: mid.mixed.latency.max,
        post_p99_ms: mid.posts.p99,
        post_p99_ms_rounds: all.map((x) => x.posts.p99),
        redirect_max_ms_rounds: all.map((x) => x.mixed.latency.max),
        failures,
      }) + '\n',
    );
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'post-load') {
  let input = '';
  process.stdin.on('data', (d: Buffer) => (input += d));
  process.stdin.on('end', () => {
    runPostLoad(process.argv[3], Number(process.argv[4]), Number(process.argv[5]), JSON.parse(input) as string[]).catch((err) => {
      process.stderr.write(`post load failed: ${(err as Error).stack}\n`);
      process.exit(1);
    });
  });
} else {
  main().catch((err) => {
    process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
