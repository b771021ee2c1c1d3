// shorten: durable POST /api/shorten against a bare uWS server that reads and parses the same body
// and answers 201 with a body of the same size and a Location header, in interleaved rounds. The
// creators' limits and the anomaly detector's thresholds are raised, and the load spreads over 64
// keys, so that what is measured is creation (the code pool, the writer's group commit, the
// anomaly detector's bookkeeping), not the limiter refusing it; the limiter's check still runs on
// every request. Afterwards every 201 must be a stored link.
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { comparisonFigures, comparisonRow, inFlightAtStops, storedCheck, type BenchContext, type PerchTarget, type ScenarioResult } from './context';
import { call } from './http';
import { keyedLoad, type LoadOptions } from './load';
import { seedUsers } from './seed';

const CREATORS = 64;
const CONNECTIONS = 256;
const BODY = { url: 'https://example.com/landing/page?utm_source=bench&utm_medium=shorten' };

const UNLIMITED_CREATION = {
  limits: { shorten: { capacity: 1_000_000_000, refill_per_second: 1_000_000_000, burst_per_second: 1_000_000_000, daily_quota: 1_000_000_000 } },
  anomaly: { max_links: 1_000_000_000, max_same_domain: 1_000_000_000 },
};

export async function runShorten(ctx: BenchContext): Promise<ScenarioResult> {
  let target: PerchTarget;
  let keys: string[];
  if (ctx.remote) {
    keys = ctx.remoteKeys('create links');
    target = ctx.remoteTarget();
    ctx.notes.push("creates links with the server's own limits (429s count as errors)");
  } else {
    const dataDir = ctx.tempDir('perch-bench-shorten-');
    keys = await ctx.progress.step('seeded creators', () => {
      const db = openSqlite(dataDir);
      migrateAll(db);
      const users = seedUsers(db, 'creator', ctx.size(CREATORS, 4), true);
      db.close();
      return users.map((u) => u.key);
    });
    target = await ctx.startPerch(dataDir, UNLIMITED_CREATION);
  }
  // The baseline answers a body of exactly the size of perch's.
  const sample = await call(target.url, 'POST', '/api/shorten', { key: keys[0], json: BODY });
  if (sample.status !== 201) throw new Error(`POST /api/shorten answered ${sample.status}: ${sample.text}`);
  const bytes = Buffer.byteLength(sample.text);
  const bare = await ctx.startBare(['created201', String(bytes)]);
  const connections = ctx.connections(CONNECTIONS);
  const request = (url: string): LoadOptions => ({ url: url + '/api/shorten', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BODY), connections });
  const memory = ctx.watchMemory(target);
  const result = await ctx.interleaved('shorten', request(bare.url), keyedLoad(request(target.url), keys), {
    seconds: ctx.seconds(4),
    rounds: ctx.rounds(),
    warmup: ctx.warmup(1),
    pids: { perch: target.pid, baseline: bare.proc.pid },
  });
  const peak = memory?.stop();
  const created = 1 + (result.warmups.perch?.status_2xx ?? 0) + result.rounds.reduce((n, r) => n + r.perch.status_2xx, 0);
  let stored: number | undefined;
  if (target.server) {
    await ctx.stopPerch(target);
    const db = openSqlite(target.server.dataDir, { readonly: true });
    stored = (db.prepare('SELECT COUNT(*) AS n FROM links').get() as { n: number }).n;
    db.close();
  }
  return {
    rows: [comparisonRow('POST /api/shorten vs bare uWS 201', result, { text: 'none set' }, peak)],
    figures: { creators: keys.length, connections, response_bytes: bytes, ...comparisonFigures(result), links_created_201: created, links_stored: stored, memory: peak },
    audit:
      stored === undefined
        ? undefined
        : [storedCheck('link', created, stored, inFlightAtStops(result, connections))],
  };
}
