// perch status: whether a server runs on the data directory, what the stores hold and how far
// background work lags, read straight from the data directory (works whether or not the server
// is running). Each capability reports its own section (capability.ts, status). It only looks: a
// schema older than this perch's is reported, not migrated (an older server may still run on it).
import { join } from 'node:path';
import { openSqlite, sqlitePath, walPath } from '../store/sqlite';
import { currentSchemaVersion } from '../store/migration';
import { liveLeases } from '../store/node-lease';
import { liveServers } from '../store/server-registry';
import { serverRunsOn } from '../store/server-lock';
import { directoryUsage, fileSize } from '../store/data-dir';
import { CAPABILITIES, latestSchemaVersion } from '../capabilities';
import type { StatusSection } from '../capability';
import { VERSION } from '../version';
import { commandConfig, existingDataDirOf, announceDataDir, commandHotStore, type CommonOptions } from './common';
import { printJson } from './usage';
import { alignColumns, humanDuration } from './format';
import { humanBytes } from '../core/human-bytes';
import { lmdbFootprint } from '../store/lmdb-footprint';
import { heapsByKind, residentOf, THREAD_KINDS } from '../server/thread-memory';

/** How long `perch status` waits for a running server's /metrics before showing memory without heaps. */
const METRICS_TIMEOUT_MS = 2000;

/**
 * A running server's memory: its resident set from /proc (the kernel keeps it per process, not
 * per thread), and the V8 heap of each kind of thread from its /metrics. Null figures when this
 * command cannot see them (another user's process, not Linux, or the server did not answer).
 */
async function serverMemory(pid: number, url: string) {
  const resident = residentOf(pid) ?? null;
  let heaps: ReturnType<typeof heapsByKind> | null = null;
  try {
    const r = await fetch(url + '/metrics', { signal: AbortSignal.timeout(METRICS_TIMEOUT_MS) });
    if (r.ok) heaps = heapsByKind(await r.text());
  } catch {
    heaps = null;
  }
  const finite = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n : null);
  return {
    resident_bytes: finite(resident?.total),
    resident_anonymous_bytes: finite(resident?.anonymous),
    resident_file_bytes: finite(resident?.file),
    resident_peak_bytes: finite(resident?.peak),
    heap_used_bytes: heaps
      ? Object.fromEntries(THREAD_KINDS.filter((k) => heaps![k]).map((k) => [k, { threads: heaps![k]!.threads, bytes: heaps![k]!.heapUsedBytes }]))
      : null,
  };
}

interface StatusOptions extends CommonOptions {
  json: boolean;
}

export async function statusCommand(opts: StatusOptions): Promise<void> {
  const config = commandConfig(opts);
  const dir = existingDataDirOf(opts);
  const db = openSqlite(dir);
  const schemaVersion = currentSchemaVersion(db);
  const latest = latestSchemaVersion();
  // The capabilities' sections read tables of the current schema: on an older one they would
  // fail, and migrating it here would change the data under an older server still running on it.
  const migrationsPending = Math.max(0, latest - schemaVersion);
  const hot = commandHotStore(dir);
  try {
    const now = Date.now();
    const sections: Record<string, StatusSection> = {};
    if (migrationsPending === 0) {
      for (const c of CAPABILITIES) if (c.status) sections[c.name] = c.status({ config, dataDir: dir, sqlite: db, hot });
    }
    // The kernel's word first (store/server-lock.ts): a record outlives a server killed with
    // SIGKILL, and its pid may since belong to another process, or in a container (a PID
    // namespace) be this very command's. This command is never a server either.
    const running = serverRunsOn(dir);
    const records = running ? liveServers(hot).filter((s) => s.pid !== process.pid) : [];
    const servers = records.map((s) => ({
      pid: s.pid,
      version: s.version,
      started_at: s.startedAt,
      uptime_seconds: Math.max(0, Math.floor((now - Date.parse(s.startedAt)) / 1000)),
      url: `http://${s.host.includes(':') ? `[${s.host}]` : s.host}:${s.port}`,
      public_origin: s.publicOrigin,
      threads: s.threads,
    }));
    const memory = await Promise.all(servers.map((s) => serverMemory(s.pid, s.url)));
    const withMemory = servers.map((s, i) => ({ ...s, memory: memory[i] }));
    const lmdb = lmdbFootprint(hot, dir);
    const status = {
      data_dir: dir,
      version: VERSION,
      schema_version: schemaVersion,
      migrations_pending: migrationsPending,
      server_running: running,
      servers: withMemory,
      hot_store: {
        file_bytes: lmdb.fileBytes,
        map_size_bytes: lmdb.mapSizeBytes,
        used_pages: lmdb.usedPages,
        page_size_bytes: lmdb.pageSizeBytes,
        readers: lmdb.readers,
      },
      database: { bytes: fileSize(sqlitePath(dir)), wal_bytes: fileSize(walPath(dir)) },
      media_files: directoryUsage(join(dir, 'media')),
      ...sections,
      node_leases: liveLeases(hot).map((l) => ({ node_id: l.nodeId, pid: l.pid, thread: l.threadId, expires_at: new Date(l.expiresAt).toISOString() })),
    };
    if (opts.json) {
      announceDataDir(dir, { json: true });
      printJson(status);
      return;
    }
    const rows: string[][] = [['data directory', dir]];
    if (!running) rows.push(['server', 'not running']);
    else if (servers.length === 0) rows.push(['server', 'running, in a process this command cannot see (another PID namespace, such as a container)']);
    for (const s of servers) {
      rows.push(['server', `running: pid ${s.pid}, perch ${s.version}, up ${humanDuration(s.uptime_seconds)}, ${s.url}, ${s.threads} HTTP thread${s.threads === 1 ? '' : 's'}`]);
      rows.push(['', `short URLs ${s.public_origin}/…`]);
    }
    for (const s of withMemory) {
      const m = s.memory;
      if (m.resident_bytes !== null) {
        const parts = m.resident_anonymous_bytes !== null && m.resident_file_bytes !== null ? ` (${humanBytes(m.resident_anonymous_bytes)} anonymous, ${humanBytes(m.resident_file_bytes)} file-backed)` : '';
        const peak = m.resident_peak_bytes !== null ? `, peak ${humanBytes(m.resident_peak_bytes)}` : '';
        rows.push(['server memory', `${humanBytes(m.resident_bytes)} resident${parts}${peak}`]);
      }
      if (m.heap_used_bytes) {
        const heaps = Object.entries(m.heap_used_bytes).map(([kind, h]) => `${kind} ${humanBytes(h.bytes)}${h.threads > 1 ? ` (${h.threads} threads)` : ''}`);
        rows.push(['server heaps', heaps.join(', ')]);
      }
    }
    rows.push(['hot store', `${humanBytes(lmdb.fileBytes)} file, ${lmdb.usedPages} pages of ${humanBytes(lmdb.pageSizeBytes)} in use, map ${humanBytes(lmdb.mapSizeBytes)}`]);
    rows.push(['perch', `${VERSION} (this command)`]);
    rows.push(['database', `${humanBytes(status.database.bytes)} + ${humanBytes(status.database.wal_bytes)} write-ahead log, schema version ${status.schema_version}`]);
    if (migrationsPending > 0) {
      rows.push(['', `${migrationsPending} migration${migrationsPending === 1 ? '' : 's'} of perch ${VERSION} not applied: perch migrate applies them (a server does as it starts); the rest is shown after`]);
    }
    rows.push(['media files', `${status.media_files.files}, ${humanBytes(status.media_files.bytes)}`]);
    for (const [name, section] of Object.entries(sections)) {
      for (const [key, value] of Object.entries(section)) {
        const shown = value !== null && typeof value === 'object' ? Object.entries(value).map(([k, v]) => `${k} ${v}`).join(', ') : String(value);
        rows.push([`${name} ${key}`, shown]);
      }
    }
    const byPid = new Map<number, number[]>();
    for (const l of status.node_leases) byPid.set(l.pid, [...(byPid.get(l.pid) ?? []), l.node_id]);
    const leases = [...byPid].map(([pid, ids]) => `${ids.join(', ')} (pid ${pid}${servers.some((s) => s.pid === pid) ? ', the server' : ''})`);
    rows.push(['node leases', leases.join('; ') || 'none']);
    for (const line of alignColumns(rows)) process.stdout.write(line + '\n');
  } finally {
    db.close();
    await hot.close();
  }
}
