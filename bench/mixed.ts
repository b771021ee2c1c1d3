// mixed: realistic traffic for the given duration (30 s by default) on one server, then an audit
// that nothing was lost. Users with keys, a follow graph, links, posts and past search queries are
// seeded first; half of the users hold a WebSocket on /ws all through the run. The traffic
// (mixed-traffic.ts) mixes redirects 100 : 1 link creations, timeline reads 20 : 1 posts, likes,
// follows, searches and suggestions, from a bounded number of concurrent requests. Its rate is
// compared with the same loop sending the same mix to a bare uWS server answering each kind of
// request with a constant answer, before and after. The audit is mixed-audit.ts.
import WebSocket from 'ws';
import { openSqlite, type Sqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { fmtInt, round1, round3, type BenchContext, type Row, type ScenarioResult } from './context';
import { percentile } from './median';
import { metricValue, metricsOf, waitUntil } from './http';
import { auditMixed, type Sockets } from './mixed-audit';
import { KINDS, MIX, MixedTraffic, notificationKey, type Ledger, type TrafficResult, type World } from './mixed-traffic';
import { IdGenerator } from '../src/core/snowflake';
import { queryMix, seedFollows, seedLinks, seedUsers, seededInts, syntheticWords, zipfTexts } from './seed';

/** Limits raised so that what is measured is the work, not the limiter refusing it (its checks still run). */
const UNLIMITED = {
  limits: {
    shorten: { capacity: 1_000_000_000, refill_per_second: 1_000_000_000, burst_per_second: 1_000_000_000, daily_quota: 1_000_000_000 },
    redirect: { capacity: 1_000_000_000, refill_per_second: 1_000_000_000 },
    search: { recent: { capacity: 1_000_000_000, refill_per_second: 1_000_000 }, relevance: { capacity: 1_000_000_000, refill_per_second: 1_000_000 } },
  },
  anomaly: { max_links: 1_000_000_000, max_same_domain: 1_000_000_000 },
};
const VOCABULARY = 2000;

/** Posts written straight into SQLite before the start (searchable once the server builds its index). */
function seedPostsOf(db: Sqlite, authors: string[], perAuthor: number, words: string[]): Map<string, string> {
  const ids = new IdGenerator(1002);
  const texts = zipfTexts(authors.length * perAuthor, words, 11);
  const insert = db.prepare("INSERT INTO posts (id, author_id, text, media_ids, reply_to, created_at) VALUES (?, ?, ?, '[]', NULL, ?)");
  const out = new Map<string, string>();
  const at = new Date(Date.now() - 60_000).toISOString();
  db.transaction(() => {
    texts.forEach((text, i) => {
      const id = ids.nextBigInt();
      const author = authors[i % authors.length];
      insert.run(id, author, text, at);
      out.set(id.toString(), author);
    });
  })();
  return out;
}

/** Past searches, so that suggestions have lists to answer from. */
function seedQueries(db: Sqlite, queries: string[]): void {
  const rand = seededInts(13);
  const now = Date.now();
  const insert = db.prepare('INSERT OR IGNORE INTO search_query_counts (query, count, updated_ms) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (const q of queries) insert.run(q, 1 + rand(100), now - rand(86_400_000));
  })();
}

function seedWorld(ctx: BenchContext, dataDir: string): World {
  const db = openSqlite(dataDir);
  migrateAll(db);
  const words = syntheticWords(VOCABULARY, 4);
  const users = seedUsers(db, 'mixed', ctx.size(200, 16), true);
  const rand = seededInts(7);
  const follows = new Set<string>();
  const edges: Array<[string, string]> = [];
  for (const u of users) {
    for (let k = 0; k < ctx.size(20, 4); k++) {
      const v = users[rand(users.length)];
      const pair = u.userId + '|' + v.userId;
      if (v === u || follows.has(pair)) continue;
      follows.add(pair);
      edges.push([u.userId, v.userId]);
    }
  }
  seedFollows(db, edges);
  const codes = seedLinks(db, ctx.size(1000, 50));
  const links = new Map<string, string>();
  const targetOf = db.prepare('SELECT url FROM links WHERE code = ?');
  for (const code of codes) links.set(code, (targetOf.get(code) as { url: string }).url);
  const posts = seedPostsOf(db, users.map((u) => u.userId), 3, words);
  const queries = [...new Set(queryMix(words, ctx.size(2000, 200)))];
  seedQueries(db, queries);
  db.close();
  return { users, follows, links, posts, words, queries };
}

/** Sockets on /ws for `holders`, recording every notification each receives. */
async function openSockets(url: string, holders: World['users']): Promise<{ sockets: Sockets; closeAll(): void }> {
  const sockets: Sockets = { received: new Map(), holders: new Set(holders.map((u) => u.userId)), closed: 0 };
  const all: WebSocket[] = [];
  const wsUrl = url.replace('http:', 'ws:') + '/ws';
  let ending = false;
  await Promise.all(
    holders.map(
      (u) =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(`${wsUrl}?access_token=${u.key}`, { perMessageDeflate: false });
          all.push(ws);
          const got = new Set<string>();
          sockets.received.set(u.userId, got);
          ws.once('open', () => resolve());
          ws.once('error', reject);
          ws.on('message', (data) => {
            const msg = JSON.parse(data.toString()) as { type: string; data: { type: string; post_id?: string | null; actor_ids: string[] } };
            if (msg.type !== 'notification') return;
            for (const actor of msg.data.actor_ids) got.add(notificationKey(msg.data.type, msg.data.post_id, actor));
          });
          ws.on('close', () => {
            if (!ending) sockets.closed++;
          });
        }),
    ),
  );
  return {
    sockets,
    closeAll() {
      ending = true;
      for (const ws of all) ws.terminate();
    },
  };
}

function kindFigures(result: TrafficResult): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const s = result.byKind[kind];
    const sorted = [...s.latencies].sort((a, b) => a - b);
    out[kind] = {
      requests: s.requests,
      rps: Math.round(s.requests / result.seconds),
      p50_ms: round1(percentile(sorted, 0.5)),
      p99_ms: round1(percentile(sorted, 0.99)),
      statuses: s.statuses,
      no_answer: s.no_answer,
      unexpected: MixedTraffic.unexpected(kind, s),
    };
  }
  return out;
}

export async function runMixed(ctx: BenchContext): Promise<ScenarioResult> {
  if (ctx.remote) ctx.skip('needs users with keys and a follow graph seeded into the data directory, and its audit reads the store');
  const seconds = ctx.seconds(30);
  const connections = ctx.connections(32);
  const baselineSeconds = Math.min(seconds, 10);
  const dataDir = ctx.tempDir('perch-bench-mixed-');
  const world = await ctx.progress.step('seeded users, follows, links, posts and past queries', () => seedWorld(ctx, dataDir));
  const target = await ctx.startPerch(dataDir, UNLIMITED);
  const bare = await ctx.startBare(['mixed', '2000']);

  const holders = world.users.filter((_, i) => i % 2 === 0);
  const { sockets, closeAll } = await ctx.progress.step(`${holders.length} sockets open on /ws`, () => openSockets(target.url, holders));
  try {
    await waitUntil(async () => metricValue(await metricsOf(target.url), 'perch_ws_open_sockets') >= holders.length, 10_000, 100);
    const runBaseline = (label: string) =>
      ctx.progress.timed(
        label,
        baselineSeconds,
        (report) => new MixedTraffic(bare.url, world, connections).run(baselineSeconds, connections, (n) => report(`${fmtInt(n)} requests`)),
        (r) => `${fmtInt(r.requests / r.seconds)} req/s`,
      );
    const before = await runBaseline('mixed baseline (bare uWS), before');
    const ledger: Ledger = { created: new Map(), clicks: new Map(), wrongLocation: 0, posts: new Map(), owed: new Map(), unanswered: 0 };
    const traffic = new MixedTraffic(target.url, world, connections, ledger);
    const memory = ctx.watchMemory(target);
    let trafficEnded = 0;
    const result = await ctx.progress.timed(
      `mixed traffic (perch, ${connections} at a time)`,
      seconds,
      async (report) => {
        const r = await traffic.run(seconds, connections, (n) => report(`${fmtInt(n)} requests`));
        trafficEnded = performance.now();
        return r;
      },
      (r) => `${fmtInt(r.requests / r.seconds)} req/s over ${fmtInt(r.requests)} requests`,
    );
    const peak = memory?.stop();
    const audit = await auditMixed(ctx, target, traffic, result, ledger, sockets, trafficEnded);
    const after = await runBaseline('mixed baseline (bare uWS), after');

    const rps = result.requests / result.seconds;
    const baselineRps = (before.requests / before.seconds + after.requests / after.seconds) / 2;
    const all = KINDS.flatMap((k) => result.byKind[k].latencies).sort((a, b) => a - b);
    const kinds = kindFigures(result);
    const errors = KINDS.reduce((n, k) => n + MixedTraffic.unexpected(k, result.byKind[k]), 0);
    const rows: Row[] = [
      {
        measure: `mixed traffic, ${connections} requests at a time vs the same mix to bare uWS`,
        rps,
        p50_ms: round1(percentile(all, 0.5)),
        p99_ms: round1(percentile(all, 0.99)),
        errors,
        baseline_rps: baselineRps,
        ratio: rps / baselineRps,
        goal: { text: 'audit passes', met: audit.every((c) => c.ok) },
        memory: peak,
      },
      ...KINDS.map((k): Row => {
        const f = kinds[k] as { rps: number; p50_ms: number; p99_ms: number; unexpected: number };
        return { measure: `  ${k}`, rps: f.rps, p50_ms: f.p50_ms, p99_ms: f.p99_ms, errors: f.unexpected };
      }),
    ];
    return {
      rows,
      audit,
      figures: {
        seconds: round1(result.seconds),
        connections,
        mix_weights: MIX,
        users: world.users.length,
        sockets: holders.length,
        seeded: { follows: world.follows.size, links: world.links.size, posts: world.posts.size, past_queries: world.queries.length },
        requests: result.requests,
        rps: Math.round(rps),
        p50_ms: round1(percentile(all, 0.5)),
        p99_ms: round1(percentile(all, 0.99)),
        baseline_rps: Math.round(baselineRps),
        baseline_runs_rps: [before, after].map((b) => Math.round(b.requests / b.seconds)),
        ratio: round3(rps / baselineRps),
        by_kind: kinds,
        links_created: ledger.created.size,
        posts_created: ledger.posts.size,
        notifications_owed: [...ledger.owed.values()].reduce((n, s) => n + s.size, 0),
        memory: peak,
        audit_passed: audit.every((c) => c.ok),
      },
    };
  } finally {
    closeAll();
  }
}
