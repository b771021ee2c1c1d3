// Export memory: the server's resident memory while it streams GET /api/links/export of 100,000
// links (CSV and JSON, a fast reader and a slow one), against the same for 10,000 links and the
// server at rest. Streamed, the peak should not grow with the number of links.
//   node dist/bench/export-memory.js [links=100000] [heap-cap-mb]
// With a heap cap, the server runs with --max-old-space-size of that many MB: an export that held
// its links in memory would run out; a streamed one only collects its garbage sooner.
// Servers listen on 127.0.0.1; each export runs once, to its end.
import { rmSync } from 'node:fs';
import { residentOf } from '../src/server/thread-memory';
import { startServer, tempDataDir, type TestServer } from '../test/helpers/server';
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { IdGenerator } from '../src/core/snowflake';
import { generateCodes } from '../src/core/short-code';
import { LinkStore } from '../src/links/store';
import { seedUsers } from './seed';

const ids = new IdGenerator(1001);

/** `n` links of `owner`, every tenth with a few days of clicks and two referrers. */
function seedOwned(store: LinkStore, db: ReturnType<typeof openSqlite>, ownerId: string, n: number): void {
  const now = Date.now();
  // Created an hour ago: links created within the anomaly detector's window would have it scan
  // all of them every second while the export runs, and that is not what this measures.
  const createdMs = now - 3_600_000;
  const codes = store.issueCodes(generateCodes(n, 7));
  const daily = db.prepare('INSERT INTO link_clicks_daily (code, day, clicks, bots) VALUES (?, ?, ?, ?)');
  const referrer = db.prepare('INSERT INTO link_referrers (code, referrer, clicks) VALUES (?, ?, ?)');
  db.transaction(() => {
    codes.forEach((code, i) => {
      store.insert({ code, id: ids.next(), ownerId, url: `https://example.com/landing/${i}?utm_source=export,bench`, domain: 'example.com', createdMs, expiresMs: null });
      if (i % 10 === 0) {
        for (let d = 0; d < 3; d++) daily.run(code, new Date(now - d * 86_400_000).toISOString().slice(0, 10), 5 + d, 1);
        referrer.run(code, 'news.example', 7);
        referrer.run(code, 'direct', 9);
      }
    });
  })();
}

/** The resident set in MB, or one of its parts: anonymous (heaps) or file (mapped files). */
function statusMb(pid: number, part: 'total' | 'anonymous' | 'file' = 'total'): number {
  return Math.round((residentOf(pid)?.[part] ?? NaN) / (1024 * 1024));
}
const rssMb = (pid: number) => statusMb(pid);

/** Runs one export while sampling the server's RSS every 20 ms; `pauseMs` per chunk read makes a slow reader. */
async function measure(server: TestServer, key: string, query: string, pauseMs: number) {
  const pid = server.proc.pid!;
  let peak = rssMb(pid);
  let peakAnon = statusMb(pid, 'anonymous');
  let peakFile = statusMb(pid, 'file');
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
    peakAnon = Math.max(peakAnon, statusMb(pid, 'anonymous'));
    peakFile = Math.max(peakFile, statusMb(pid, 'file'));
  }, 20);
  const started = Date.now();
  const r = await fetch(`${server.url}/api/links/export${query}`, { headers: { authorization: `Bearer ${key}` } });
  const reader = r.body!.getReader();
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (pauseMs) await new Promise((res) => setTimeout(res, pauseMs));
  }
  clearInterval(sampler);
  peak = Math.max(peak, rssMb(pid));
  // The HTTP threads' V8 heaps once the export is over: what the export left them holding. With
  // one HTTP thread that is the main thread (kind "main"), else the "http" threads.
  const metrics = (await server.get('/metrics')).text;
  const httpHeapMb = (name: string) =>
    Math.round(
      metrics
        .split('\n')
        .filter((l) => l.startsWith(name + '{') && (l.includes('kind="http"') || l.includes('kind="main"')))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0) / 1048576,
    );
  return {
    http_heap_used_mb: httpHeapMb('perch_thread_heap_used_bytes'),
    http_heap_total_mb: httpHeapMb('perch_thread_heap_total_bytes'),
    query, reader: pauseMs ? `slow (${pauseMs} ms per read)` : 'fast', status: r.status, mb: +(bytes / 1048576).toFixed(1),
    seconds: (Date.now() - started) / 1000, peak_rss_mb: peak, peak_anon_mb: peakAnon, peak_file_mb: peakFile,
  };
}

async function main(): Promise<void> {
  const big = Number(process.argv[2] ?? 100_000);
  const heapCap = process.argv[3] ? Number(process.argv[3]) : undefined;
  const env = heapCap ? { NODE_OPTIONS: `--max-old-space-size=${heapCap}` } : undefined;
  const dataDir = tempDataDir('perch-bench-export-');
  const db = openSqlite(dataDir);
  migrateAll(db);
  const [large, small] = seedUsers(db, 'exporter', 2, true);
  const store = new LinkStore(db);
  seedOwned(store, db, large.userId, big);
  seedOwned(store, db, small.userId, big / 10);
  db.close();
  const runs = [];
  try {
    for (const [key, n, query, pause] of [
      [small.key, big / 10, '?format=csv', 0],
      [large.key, big, '?format=csv', 0],
      [large.key, big, '?format=csv', 2],
      [small.key, big / 10, '?format=json', 0],
      [large.key, big, '?format=json', 0],
    ] as Array<[string, number, string, number]>) {
      // A server of its own per export: its peak is that export's, not the highest of the runs before.
      const server = await startServer({ dataDir, threads: 1, env, config: { log: { level: 'warn' } } });
      try {
        await server.get('/api/links?limit=1', { key: small.key });
        await new Promise((r) => setTimeout(r, 1000));
        const idle = rssMb(server.proc.pid!);
        const idleAnon = statusMb(server.proc.pid!, 'anonymous');
        const m = await measure(server, key, query, pause);
        runs.push({ links: n, idle_rss_mb: idle, idle_anon_mb: idleAnon, ...m });
        process.stdout.write(
          `${n} links ${query} ${m.reader}: ${m.mb} MB in ${m.seconds} s, server RSS at rest ${idle} MB (anon ${idleAnon}), ` +
            `peak ${m.peak_rss_mb} MB (anon ${m.peak_anon_mb}, file ${m.peak_file_mb}); HTTP thread heap after ${m.http_heap_used_mb} MB used of ${m.http_heap_total_mb}\n`,
        );
      } finally {
        await server.stop('SIGTERM');
      }
    }
    // The same export five times on one server: a peak that keeps rising would be a leak; one that
    // levels off is memory the process keeps for reuse.
    const repeated: number[] = [];
    const server = await startServer({ dataDir, threads: 1, env, config: { log: { level: 'warn' } } });
    try {
      for (let i = 0; i < 5; i++) repeated.push((await measure(server, large.key, '?format=json', 0)).peak_rss_mb);
    } finally {
      await server.stop('SIGTERM');
    }
    process.stdout.write(`${big} links ?format=json five times on one server: peaks ${repeated.join(', ')} MB\n`);
    process.stdout.write(JSON.stringify({ scenario: 'export-memory', heap_cap_mb: heapCap ?? null, runs, repeated_json_peaks_mb: repeated }) + '\n');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
