// Redirect benchmark: GET /{code} over 10,000 links against a bare uWS server answering a
// constant 302, both driven by the same autocannon settings in the same run, alternating rounds,
// so the ratio holds on a noisy machine. Afterwards the click queue must drain to zero and the
// recorded clicks must equal the 302s served.
//   node dist/bench/redirect.js [seconds-per-round=4] [rounds=3] [threads=1]
// Load is bounded: 100 connections, each run at most 10 s, servers on 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { startServer, tempDataDir, type TestServer } from '../test/helpers/server';
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { loadNativeUws } from '../src/http/uws';
import { median } from './median';
import { seedLinks } from './seed';
import { REDIRECT_CONNECTIONS, REDIRECT_LINKS, redirectLoad } from './load';

/** The baseline: the least a redirect can be, a constant 302 with the same fixed headers. */
function runBaseline(): void {
  const uws = loadNativeUws();
  const app = uws.App();
  app.get('/*', (res) => {
    res.writeStatus('302 Found');
    res.writeHeader('Location', 'https://example.com/some/landing/page?utm_source=bench');
    res.writeHeader('Cache-Control', 'private, no-store');
    res.end();
  });
  app.listen('127.0.0.1', 0, (sock) => {
    if (!sock) process.exit(1);
    process.stdout.write(`${uws.us_socket_local_port(sock)}\n`);
  });
}

function startBaseline(): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [__filename, 'baseline'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    proc.stdout!.once('data', (d: Buffer) => resolve({ proc, url: `http://127.0.0.1:${String(d).trim()}` }));
    proc.once('exit', (code) => reject(new Error(`baseline exited with ${code}`)));
  });
}

/** 10,000 links of one user, written straight into SQLite before the server starts. */
function seed(dataDir: string): string[] {
  const db = openSqlite(dataDir);
  migrateAll(db);
  const codes = seedLinks(db, REDIRECT_LINKS);
  db.close();
  return codes;
}

async function metricsOf(server: TestServer): Promise<string> {
  return (await server.get('/metrics')).text;
}

function metricValue(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    if (labels && !line.includes(labels)) continue;
    if (line[name.length] !== ' ' && line[name.length] !== '{') continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function main(): Promise<void> {
  const seconds = Math.min(10, Number(process.argv[2] ?? 4));
  const rounds = Number(process.argv[3] ?? 3);
  const threads = Number(process.argv[4] ?? 1);
  const dataDir = tempDataDir('perch-bench-redirect-');
  const codes = seed(dataDir);
  const baseline = await startBaseline();
  const server = await startServer({
    dataDir,
    threads,
    config: {
      log: { level: 'warn' },
      // The loose per-IP limit would otherwise be what this measures: every request comes from 127.0.0.1.
      limits: { redirect: { capacity: 1_000_000_000, refill_per_second: 1_000_000_000 } },
    },
  });
  try {
    // Warm both: JIT, connections, and perch's caches (each code read once from SQLite).
    await redirectLoad(baseline.url, codes, 2);
    await redirectLoad(server.url, codes, 2);
    const base: number[] = [];
    const perch: number[] = [];
    let served3xx = 0;
    let perchErrors = 0;
    for (let r = 0; r < rounds; r++) {
      const b = await redirectLoad(baseline.url, codes, seconds);
      const p = await redirectLoad(server.url, codes, seconds);
      base.push(b.requests.average);
      perch.push(p.requests.average);
      perchErrors += p.errors + p.timeouts + (p.non2xx - p['3xx']);
      served3xx += p['3xx'];
      process.stdout.write(
        `round ${r + 1}: bare uWS ${Math.round(b.requests.average)} req/s (p99 ${b.latency.p99} ms), ` +
          `perch ${Math.round(p.requests.average)} req/s (p99 ${p.latency.p99} ms), ratio ${(p.requests.average / b.requests.average).toFixed(3)}\n`,
      );
    }
    const ratios = base.map((b, i) => perch[i] / b);
    // Drain check: the queue empties, and every 302 (warm-up included) became one recorded click.
    const deadline = Date.now() + 60_000;
    let depth = Infinity;
    while (Date.now() < deadline) {
      depth = metricValue(await metricsOf(server), 'perch_click_queue_depth');
      if (depth === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const text = await metricsOf(server);
    const redirects302 = metricValue(text, 'perch_http_requests_total', 'status="302"');
    await server.stop('SIGTERM');
    const db = openSqlite(dataDir, { readonly: true });
    const recorded = (db.prepare('SELECT events FROM link_click_totals WHERE id = 1').get() as { events: number }).events;
    const daily = (db.prepare('SELECT COALESCE(SUM(clicks + bots), 0) AS n FROM link_clicks_daily').get() as { n: number }).n;
    db.close();
    const summary = {
      scenario: 'redirect',
      links: REDIRECT_LINKS,
      connections: REDIRECT_CONNECTIONS,
      seconds_per_round: seconds,
      rounds,
      http_threads: threads,
      baseline_rps: base.map(Math.round),
      perch_rps: perch.map(Math.round),
      ratios: ratios.map((x) => Number(x.toFixed(3))),
      median_ratio: Number(median(ratios).toFixed(3)),
      perch_errors: perchErrors,
      measured_302s: served3xx,
      server_302s: redirects302,
      click_queue_depth_after: depth,
      recorded_clicks: recorded,
      daily_aggregate_clicks: daily,
      nothing_lost: depth === 0 && recorded === redirects302 && daily === redirects302,
    };
    process.stdout.write(JSON.stringify(summary) + '\n');
  } finally {
    baseline.proc.kill('SIGTERM');
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'baseline') runBaseline();
else
  main().catch((err) => {
    process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
    process.exit(1);
  });
