// Memory and disk footprint of one perch process, measured as a new user would run it: one HTTP
// thread, 200 links, GET /{code} from autocannon at 50 connections. At rest (20 s after start) and
// at the end of the load: /proc/<pid>/status (VmRSS and its parts RssAnon, RssFile; VmHWM), the
// resident set by mapping (smaps), each thread's V8 heap and the LMDB figures from /metrics; during
// the load, the peaks of samples taken every 100 ms (docs/memory.md).
//   node dist/bench/footprint.js load [seconds=15] [links=200] [connections=50]
//   node dist/bench/footprint.js steady [minutes=10] [links=200] [connections=50]
// `steady` runs the same load minute after minute and reports, per minute, the resident set, the
// LMDB file and its pages, and the deepest the click queue was (the file keeps the high-water mark
// of what the queue held at once, so it must level off once that does).
// Load is bounded (it stops by itself) and the server listens on 127.0.0.1 only.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, tempDataDir, type TestServer } from '../test/helpers/server';
import { openSqlite } from '../src/store/sqlite';
import { migrateAll } from '../src/capabilities';
import { seedLinks } from './seed';
import { autocannon, type LoadResult } from './load';

/** As in src/server/background.ts (kept here so that this tool also measures older builds). */
const POOL_IDLE_TIMEOUT_MS = 30_000;

const MB = 1024 * 1024;

/** Fields of /proc/<pid>/status, in bytes. */
export function procStatus(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+) kB$/.exec(line);
    if (m) out[m[1]] = Number(m[2]) * 1024;
  }
  return out;
}

/**
 * Resident bytes by what is mapped, from /proc/<pid>/smaps: the node binary, each native module,
 * the LMDB map, other files, the C heap ([heap]), thread stacks, and anonymous mappings (V8's
 * heaps and glibc's per-thread arenas are both anonymous; they cannot be told apart here).
 */
export function residentByMapping(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1];
      if (path === '') name = 'anonymous';
      else if (path.startsWith('[')) name = path;
      else if (path.endsWith('/data.mdb')) name = 'lmdb data.mdb';
      else if (path.endsWith('.node')) name = path.slice(path.lastIndexOf('/') + 1);
      else if (path === process.execPath || path.endsWith('/node')) name = 'node binary';
      else if (/\.so(\.|$)/.test(path)) name = 'shared libraries';
      else name = 'other files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB$/.exec(line);
    if (rss) out[name] = (out[name] ?? 0) + Number(rss[1]) * 1024;
  }
  return out;
}

function mb(bytes: number): number {
  return Math.round((bytes / MB) * 10) / 10;
}

function mbTable(t: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(t).sort((a, b) => b[1] - a[1])) if (v >= 0.1 * MB) out[k] = mb(v);
  return out;
}

/** The per-thread series of a gauge in /metrics text: label set → value. */
function series(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    const at = line.lastIndexOf(' ');
    out[line.slice(name.length, at) || '(all)'] = Number(line.slice(at + 1));
  }
  return out;
}

async function threadFigures(server: TestServer): Promise<Record<string, Record<string, number>>> {
  const text = (await server.get('/metrics')).text;
  const out: Record<string, Record<string, number>> = {};
  for (const name of ['perch_thread_heap_used_bytes', 'perch_thread_heap_total_bytes', 'perch_thread_external_bytes', 'perch_lmdb_used_pages', 'perch_lmdb_file_bytes', 'perch_process_resident_bytes']) {
    const s = series(text, name);
    if (Object.keys(s).length > 0) out[name] = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, name.endsWith('_pages') ? v : mb(v)]));
  }
  return out;
}

function lmdbFileBytes(dataDir: string): number {
  try {
    return statSync(join(dataDir, 'lmdb', 'data.mdb')).size;
  } catch {
    return 0;
  }
}

function snapshot(pid: number, dataDir: string) {
  const s = procStatus(pid);
  return {
    rss_mb: mb(s.VmRSS),
    anon_mb: mb(s.RssAnon),
    file_mb: mb(s.RssFile),
    shmem_mb: mb(s.RssShmem ?? 0),
    hwm_mb: mb(s.VmHWM),
    threads: s.Threads,
    lmdb_file_mb: mb(lmdbFileBytes(dataDir)),
  };
}

/** Samples the process every 100 ms; returns the peaks seen. */
function sampler(pid: number) {
  const peak = { rss: 0, anon: 0, file: 0 };
  const sample = () => {
    try {
      const s = procStatus(pid);
      peak.rss = Math.max(peak.rss, s.VmRSS);
      peak.anon = Math.max(peak.anon, s.RssAnon);
      peak.file = Math.max(peak.file, s.RssFile);
    } catch {
      // The process ended.
    }
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peak_rss_mb: mb(peak.rss), peak_anon_mb: mb(peak.anon), peak_file_mb: mb(peak.file) };
    },
  };
}

async function redirectLoad(url: string, codes: string[], seconds: number, connections: number): Promise<LoadResult> {
  let i = 0;
  return await autocannon({
    url,
    duration: seconds,
    connections,
    requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: '/' + codes[i++ % codes.length] }) }],
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const mode = process.argv[2] ?? 'load';
  if (mode !== 'load' && mode !== 'steady') throw new Error('usage: memory.js load|steady [seconds|minutes] [links] [connections]');
  const length = Number(process.argv[3] ?? (mode === 'load' ? 15 : 10));
  const links = Number(process.argv[4] ?? 200);
  const connections = Number(process.argv[5] ?? 50);
  const dataDir = tempDataDir('perch-bench-memory-');
  const db = openSqlite(dataDir);
  migrateAll(db);
  // Created an hour ago, as on an instance at rest: links created within the anomaly detector's
  // window would have it scan them every second, keeping a pool thread busy through the idle figures.
  const codes = seedLinks(db, links, Date.now() - 3_600_000);
  db.close();
  const server = await startServer({
    dataDir,
    threads: 1,
    // The loose per-IP limit would answer most requests 429 (they all come from 127.0.0.1).
    config: { log: { level: 'warn' }, limits: { redirect: { capacity: 1_000_000_000, refill_per_second: 1_000_000_000 } } },
  });
  const pid = server.proc.pid!;
  process.stdout.write(`server pid ${pid}, data directory ${dataDir}\n`);
  try {
    // At rest: long enough after start for the background jobs' first ticks and for the pool to
    // end the thread it only needed while starting (background.ts, POOL_IDLE_TIMEOUT_MS).
    await sleep(POOL_IDLE_TIMEOUT_MS + 10_000);
    const idle = { ...snapshot(pid, dataDir), by_mapping_mb: mbTable(residentByMapping(pid)), ...(await threadFigures(server)) };
    process.stdout.write(`idle: ${JSON.stringify(idle)}\n`);
    const s = sampler(pid);
    if (mode === 'load') {
      const r = await redirectLoad(server.url, codes, length, connections);
      const under = { ...snapshot(pid, dataDir), by_mapping_mb: mbTable(residentByMapping(pid)), ...(await threadFigures(server)) };
      const peaks = s.stop();
      process.stdout.write(`end of load: ${JSON.stringify(under)}\n`);
      await sleep(5000);
      const after = snapshot(pid, dataDir);
      process.stdout.write(`5 s after: ${JSON.stringify(after)}\n`);
      process.stdout.write(
        JSON.stringify({
          scenario: 'memory-load', links, connections, seconds: length, rps: Math.round(r.requests.average), errors: r.errors + r.timeouts,
          idle_rss_mb: idle.rss_mb, idle_anon_mb: idle.anon_mb, ...peaks, vmhwm_mb: under.hwm_mb, end_rss_mb: under.rss_mb, end_anon_mb: under.anon_mb,
          after_rss_mb: after.rss_mb, lmdb_file_mb: after.lmdb_file_mb,
        }) + '\n',
      );
    } else {
      const minutes: Array<Record<string, number>> = [];
      let requests = 0;
      for (let m = 1; m <= length; m++) {
        // The click queue's deepest point in the minute, sampled from /metrics every 2 s: LMDB's
        // file keeps the high-water mark of what it held at once.
        let maxDepth = 0;
        const depthTimer = setInterval(() => {
          server.get('/metrics').then(
            (res) => (maxDepth = Math.max(maxDepth, series(res.text, 'perch_click_queue_depth')['(all)'] ?? 0)),
            () => undefined,
          );
        }, 2000);
        const r = await redirectLoad(server.url, codes, 60, connections);
        clearInterval(depthTimer);
        requests += r.requests.total;
        const now = snapshot(pid, dataDir);
        const pages = series((await server.get('/metrics')).text, 'perch_lmdb_used_pages')['(all)'];
        minutes.push({ minute: m, rps: Math.round(r.requests.average), ...now, max_queue_entries: maxDepth, lmdb_used_pages: pages });
        process.stdout.write(`minute ${m}: ${JSON.stringify(minutes[minutes.length - 1])}\n`);
      }
      const peaks = s.stop();
      const end = { by_mapping_mb: mbTable(residentByMapping(pid)), ...(await threadFigures(server)) };
      process.stdout.write(`end: ${JSON.stringify(end)}\n`);
      process.stdout.write(
        JSON.stringify({
          scenario: 'memory-steady', links, connections, minutes: length, requests, ...peaks,
          lmdb_file_mb: minutes.map((x) => x.lmdb_file_mb), rss_mb: minutes.map((x) => x.rss_mb), anon_mb: minutes.map((x) => x.anon_mb),
        }) + '\n',
      );
    }
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module)
  main().catch((err) => {
    process.stderr.write(`bench failed: ${(err as Error).stack}\n`);
    process.exit(1);
  });
