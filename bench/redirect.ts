// redirect: GET /{code} over 10,000 links against a bare uWS server answering a constant 302, in
// interleaved rounds (baseline, perch, baseline). Then what a stream of posts costs the redirect
// path: rounds of redirects alone, beside a post load at 2,000 posts/s from a second process, and
// alone again. With one HTTP thread (the default) the writer's group commits and the answers to
// posts run on the event loop that serves redirects. Afterwards the click queue must drain to zero
// and the clicks recorded must equal the 302s the server counted (nothing lost). The memory of the
// perch process is reported for each part: the memory goals are set for the redirects alone.
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { atLeast, comparisonFigures, comparisonRow, round3, type BenchContext, type PerchTarget, type Row, type ScenarioResult } from './context';
import { call, linksOf, metricValue, metricsOf, waitUntil } from './http';
import { REDIRECT_CONNECTIONS, REDIRECT_LINKS, failures, redirectLoad, type LoadOptions } from './load';
import type { MemoryPeak } from './memory';
import { median, medianBy } from './median';
import { besidePostLoad } from './post-load';
import { seedAuthorsWithFollowers, seedLinks } from './seed';

/** The memory goals of the redirect benchmark (peak resident and anonymous memory of the perch process). */
export const PEAK_RSS_GOAL_MIB = 160;
export const PEAK_ANON_GOAL_MIB = 128;
const POST_RATE = 2000;
const POST_CONNECTIONS = 32;
/** The loose per-IP limit would otherwise be what this measures: every request comes from 127.0.0.1. */
const UNLIMITED_REDIRECTS = { limits: { redirect: { capacity: 1_000_000_000, refill_per_second: 1_000_000_000 } } };

export function memoryGoals(memory: MemoryPeak | undefined): { rss: boolean | undefined; anon: boolean | undefined } {
  return {
    rss: memory ? memory.peak_rss_mib <= PEAK_RSS_GOAL_MIB : undefined,
    anon: memory ? memory.peak_anon_mib <= PEAK_ANON_GOAL_MIB : undefined,
  };
}

interface Seeded {
  target: PerchTarget;
  codes: string[];
  authorKeys: string[];
}

async function ownServer(ctx: BenchContext): Promise<Seeded> {
  const dataDir = ctx.tempDir('perch-bench-redirect-');
  const { codes, authorKeys } = await ctx.progress.step('seeded links and authors', () => {
    const db = openSqlite(dataDir);
    migrateAll(db);
    const codes = seedLinks(db, ctx.size(REDIRECT_LINKS, 200));
    const authors = seedAuthorsWithFollowers(db, ctx.size(50, 5), ctx.size(10, 2));
    db.close();
    return { codes, authorKeys: authors.map((a) => a.key) };
  });
  const target = await ctx.startPerch(dataDir, UNLIMITED_REDIRECTS);
  return { target, codes, authorKeys };
}

/** With --url: the key's own links (creating a few when it has none), and the key as the only author. */
async function runningServer(ctx: BenchContext): Promise<Seeded> {
  const keys = ctx.remoteKeys('list or create the links it redirects to');
  const target = ctx.remoteTarget();
  let codes = await linksOf(target.url, keys[0], REDIRECT_LINKS);
  if (codes.length === 0) {
    for (let i = 0; i < 10; i++) {
      const r = await call(target.url, 'POST', '/api/shorten', { key: keys[0], json: { url: `https://example.com/perch-bench/${i}` } });
      if (r.status === 201) codes.push(r.json.short_code as string);
    }
    ctx.notes.push(`the key had no links: created ${codes.length} to redirect to`);
  }
  if (codes.length === 0) throw new Error('no link to redirect to: the key has none and could create none');
  ctx.notes.push(`redirects over the key's ${codes.length} links, under the server's own per-IP redirect limit (429s count as errors)`);
  ctx.notes.push('clicks are not audited with --url (the audit reads the data directory)');
  return { target, codes, authorKeys: keys };
}

export async function runRedirect(ctx: BenchContext): Promise<ScenarioResult> {
  const { target, codes, authorKeys } = ctx.remote ? await runningServer(ctx) : await ownServer(ctx);
  const bare = await ctx.startBare(['redirect302']);
  const connections = ctx.connections(REDIRECT_CONNECTIONS);
  const seconds = ctx.seconds(4);
  const rounds = ctx.rounds();
  const withConnections = (o: LoadOptions): LoadOptions => ({ ...o, connections });

  const aloneMemory = ctx.watchMemory(target);
  const alone = await ctx.interleaved('redirect', withConnections(redirectLoad(bare.url, codes)), withConnections(redirectLoad(target.url, codes)), {
    seconds,
    rounds,
    warmup: ctx.warmup(2),
    expected: '3xx',
    pids: { perch: target.pid, baseline: bare.proc.pid },
  });
  const memory = aloneMemory?.stop();

  // Redirects beside posts: alone, beside the post load, alone again, in each round.
  const postRate = ctx.size(POST_RATE, 200);
  const besideMemory = ctx.watchMemory(target);
  const beside: Array<{ alone: number[]; beside: number; ratio: number; p99Alone: number; p99Beside: number; maxBeside: number; posts: { rps: number; p99: number; failed: number }; failed: number }> = [];
  const perchLoad = withConnections(redirectLoad(target.url, codes));
  for (let r = 1; r <= rounds; r++) {
    const label = `redirect beside posts round ${r}/${rounds}`;
    const before = await ctx.load(`${label}, alone`, { ...perchLoad, duration: seconds }, '3xx');
    const { measured: mixed, posts: postResult } = await besidePostLoad(
      target.url,
      { rate: postRate, seconds, connections: POST_CONNECTIONS, keys: authorKeys },
      (p) => ctx.adopt(p),
      () => ctx.load(`${label}, beside ${postRate.toLocaleString('en-US')} posts/s`, { ...perchLoad, duration: seconds }, '3xx'),
    );
    const after = await ctx.load(`${label}, alone`, { ...perchLoad, duration: seconds }, '3xx');
    const ratio = mixed.rps / ((before.rps + after.rps) / 2);
    ctx.progress.line(`  ${label}: ${Math.round(postResult.rps)} posts/s (p99 ${postResult.p99_ms} ms), ratio ${ratio.toFixed(3)}`);
    beside.push({
      alone: [before.rps, after.rps],
      beside: mixed.rps,
      ratio,
      p99Alone: Math.max(before.p99_ms, after.p99_ms),
      p99Beside: mixed.p99_ms,
      maxBeside: mixed.max_ms,
      posts: { rps: postResult.rps, p99: postResult.p99_ms, failed: failures(postResult) },
      failed: failures(before, '3xx') + failures(mixed, '3xx') + failures(after, '3xx'),
    });
  }
  const besideMid = medianBy(beside, (x) => x.ratio);
  const besideMemoryPeak = besideMemory?.stop();

  const lost = ctx.remote ? undefined : await nothingLost(ctx, target);
  const goals = memoryGoals(memory);
  const rows: Row[] = [
    comparisonRow('GET /{code} vs bare uWS 302', alone, atLeast(0.85, alone.median.ratio), memory, '3xx'),
    {
      measure: `GET /{code} beside ${postRate.toLocaleString('en-US')} posts/s vs alone`,
      rps: besideMid.beside,
      p99_ms: besideMid.p99Beside,
      errors: beside.reduce((n, x) => n + x.failed + x.posts.failed, 0),
      baseline_rps: (besideMid.alone[0] + besideMid.alone[1]) / 2,
      ratio: besideMid.ratio,
      goal: { text: 'none set' },
      memory: besideMemoryPeak,
    },
  ];
  const notes: string[] = [];
  if (memory) {
    notes.push(
      `memory under the redirect load: peak RSS ${memory.peak_rss_mib} MiB (goal ≤ ${PEAK_RSS_GOAL_MIB}: ${goals.rss ? 'met' : 'not met'}), ` +
        `peak anonymous ${memory.peak_anon_mib} MiB (goal ≤ ${PEAK_ANON_GOAL_MIB}: ${goals.anon ? 'met' : 'not met'})`,
    );
  }
  return {
    rows,
    notes,
    audit: lost
      ? [
          {
            check: 'every 302 served became one recorded click (the click queue drained)',
            ok: lost.nothing_lost === true,
            figures: { server_302s: lost.server_302s, recorded_clicks: lost.recorded_clicks, daily_aggregate_clicks: lost.daily_aggregate_clicks, click_queue_depth_after: lost.click_queue_depth_after },
          },
        ]
      : undefined,
    figures: {
      links: codes.length,
      connections,
      seconds_per_run: seconds,
      ...comparisonFigures(alone, '3xx'),
      memory,
      memory_goals: { peak_rss_mib: PEAK_RSS_GOAL_MIB, peak_anon_mib: PEAK_ANON_GOAL_MIB, peak_rss_met: goals.rss, peak_anon_met: goals.anon },
      beside_posts: {
        posts_per_second_asked: postRate,
        post_connections: POST_CONNECTIONS,
        round_ratios: beside.map((x) => round3(x.ratio)),
        ratio: round3(besideMid.ratio),
        redirects_alone_rps: besideMid.alone.map(Math.round),
        redirects_with_posts_rps: Math.round(besideMid.beside),
        posts_rps: Math.round(besideMid.posts.rps),
        redirect_p99_ms_alone: besideMid.p99Alone,
        redirect_p99_ms_with_posts: besideMid.p99Beside,
        redirect_max_ms_with_posts: besideMid.maxBeside,
        post_p99_ms: besideMid.posts.p99,
        post_p99_ms_rounds: beside.map((x) => x.posts.p99),
        post_p99_ms_median: median(beside.map((x) => x.posts.p99)),
        failures: beside.reduce((n, x) => n + x.failed + x.posts.failed, 0),
        memory: besideMemoryPeak,
      },
      ...(lost ?? {}),
    },
  };
}

/** The click queue drains to zero, and every 302 served (warm-ups included) became one recorded click. */
async function nothingLost(ctx: BenchContext, target: PerchTarget): Promise<Record<string, unknown>> {
  let depth = NaN;
  await ctx.progress.step('click queue drained', () =>
    waitUntil(async () => (depth = metricValue(await metricsOf(target.url), 'perch_click_queue_depth')) === 0, 60_000, 200),
  );
  const served302 = metricValue(await metricsOf(target.url), 'perch_http_requests_total', 'status="302"');
  await ctx.stopPerch(target);
  const db = openSqlite(target.server!.dataDir, { readonly: true });
  const recorded = (db.prepare('SELECT events FROM link_click_totals WHERE id = 1').get() as { events: number }).events;
  const daily = (db.prepare('SELECT COALESCE(SUM(clicks + bots), 0) AS n FROM link_clicks_daily').get() as { n: number }).n;
  db.close();
  return {
    click_queue_depth_after: depth,
    server_302s: served302,
    recorded_clicks: recorded,
    daily_aggregate_clicks: daily,
    nothing_lost: depth === 0 && recorded === served302 && daily === served302,
  };
}
