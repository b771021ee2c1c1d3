// Hot state that can be rebuilt from SQLite lives in one LMDB environment under the data dir,
// shared by every thread and process on the box; its write transactions are atomic across them.
// Writes are not fsynced (noSync): they survive a crash of the process, and everything here is
// either rebuildable or, like rate-limit buckets, harmless to lose on a power cut.
//
// Because it is rebuildable, a damaged environment is not worth a crash: LMDB trusts its file so
// far that a zeroed header or a garbage page kills the process (SIGSEGV, SIGBUS, an abort) rather
// than returning an error. openHotStore checks the header before LMDB sees it, and with
// `repair` also checks every page the newest snapshot reaches from the file's bytes
// (core/lmdb-tree.ts), then reads the whole environment in a child process, where a crash costs
// only the child; a damaged environment is then moved aside and an empty one started in its
// place, unless a server runs on the data directory (store/server-lock.ts): the environment is
// then that server's, and left in place (docs/architecture.md, "A damaged hot store").
import Database from 'better-sqlite3';
import type { RootDatabase } from 'lmdb';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { LMDB_HEADER_READ_BYTES, lmdbHeaderProblem, lmdbPageSize } from '../core/lmdb-header';
import { lmdbTreeProblem, newestMeta } from '../core/lmdb-tree';
import { log } from '../log';
import { serverRunsOn } from './server-lock';
import { isBusy } from './sqlite';
import { PROBE_DAMAGE_LINE, PROBE_FOUND_DAMAGE, isLmdbDamageError, namedDatabases, openRoot, type LmdbDb } from './lmdb-env';

export type { LmdbDb } from './lmdb-env';

export interface HotStore {
  root: RootDatabase;
  /** Node-id leases of the id generator, keyed by node id. */
  leases: LmdbDb<NodeLease, number>;
  /** Named databases opened on demand by the capabilities that own them. */
  db<V = unknown, K extends import('lmdb').Key = import('lmdb').Key>(name: string, options?: { encoding?: 'msgpack' | 'binary' }): LmdbDb<V, K>;
  /**
   * True when this environment replaced a damaged one (here or in an earlier command) and what
   * must be rebuilt from SQLite has not been yet; the server rebuilds it and calls markRebuilt.
   */
  readonly recovered: boolean;
  markRebuilt(): void;
  close(): Promise<void>;
}

export interface NodeLease {
  pid: number;
  threadId: number;
  expiresAt: number;
  lastMs: number;
}

export interface Repair {
  reason: string;
  movedTo: string;
}

export interface OpenHotStoreOptions {
  /**
   * Check the environment thoroughly and replace it when damaged. For a process that opens it
   * before the others (the server's supervisor, before its threads start) and for CLI commands;
   * threads and pool workers open what the supervisor checked.
   */
  repair?: boolean;
  /** Told once, when a damaged environment was moved aside. */
  onRepaired?(repair: Repair): void;
}

/** A damaged environment, found by a process that does not repair (or could not). */
export class HotStoreDamagedError extends Error {}

export function lmdbPath(dataDir: string): string {
  return join(dataDir, 'lmdb');
}

/**
 * The file whose lock serialises opening the environment between processes (openHotStore). It
 * sits beside the environment, not in it: a repair renames the environment's directory while
 * holding the lock.
 */
export const OPEN_LOCK_FILE = 'lmdb-open.lock';

/**
 * How long an open waits for another process's open to finish: longer than a probe may take
 * (PROBE_TIMEOUT_MS), so that only a process that hangs while opening makes others give up.
 */
const OPEN_LOCK_WAIT_MS = 150_000;

/** The database that records a pending rebuild (a key, present until markRebuilt). */
const STATE_DB = 'hot_store';
const REBUILD_PENDING = 'rebuild_pending';

/** How a process reading a damaged environment dies. */
const DAMAGE_SIGNALS: ReadonlySet<string> = new Set(['SIGSEGV', 'SIGBUS', 'SIGABRT', 'SIGILL', 'SIGFPE']);

/**
 * How many more looks fileProblem takes at a problem before it gives up telling (below), and the
 * pause before each: longer than a commit takes to write its pages and then its meta page.
 */
const FILE_LOOKS = 5;
const FILE_LOOK_PAUSE_MS = 100;

/**
 * Why `<path>/data.mdb` is damaged, from its bytes, or null (also when there is no file yet): its
 * header, and with `trees` every page the newest snapshot reaches (core/lmdb-tree.ts). Read with
 * plain reads, never mapped, so a garbage page cannot crash this process.
 *
 * Those reads hold no reader slot, so another process writing the environment meanwhile (a server
 * beside a command, a command beside a starting server) reuses pages of the snapshot being read:
 * a look then meets pages newer than its snapshot, or past the end of the file as it was, in a
 * healthy environment. So a problem counts only when a second look, after a pause, finds the same
 * one in the same header (no commit in between); a header that moves at every look is an
 * environment in use, and that is not damage this look can tell: null.
 */
export function fileProblem(path: string, trees: boolean): string | null {
  const file = join(path, 'data.mdb');
  if (!existsSync(file)) return null;
  let seen = lookAtFile(file, trees);
  for (let look = 0; seen.problem !== null && look < FILE_LOOKS; look++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FILE_LOOK_PAUSE_MS);
    const again = lookAtFile(file, trees);
    if (again.problem === null) return null;
    if (again.problem === seen.problem && again.head.equals(seen.head)) return again.problem;
    seen = again;
  }
  return null;
}

/** One look at the file: its header's bytes, and what is wrong with it (null: nothing found). */
function lookAtFile(file: string, trees: boolean): { head: Buffer; problem: string | null } {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const readAt = (position: number, length: number): Buffer | null => {
      if (position + length > size) return null;
      const buffer = Buffer.alloc(length);
      let read = 0;
      while (read < length) {
        const n = readSync(fd, buffer, read, length - read, position + read);
        if (n === 0) return null;
        read += n;
      }
      return buffer;
    };
    const head = readAt(0, Math.min(size, LMDB_HEADER_READ_BYTES)) ?? Buffer.alloc(0);
    const header = lmdbHeaderProblem(head, size);
    if (header || !trees || size === 0) return { head, problem: header };
    const pageSize = lmdbPageSize(head);
    const meta = newestMeta(head.subarray(0, pageSize), head.subarray(pageSize, 2 * pageSize));
    return { head, problem: lmdbTreeProblem(meta, pageSize, (pgno) => readAt(pgno * pageSize, pageSize)) };
  } finally {
    closeSync(fd);
  }
}

/** How long the probe may read before it counts as having told nothing. */
const PROBE_TIMEOUT_MS = 120_000;

/**
 * Reads every entry of every database in a child process (lmdb-probe.ts), and writes once.
 * Returns why the environment is damaged, or null when the child read it all, or could not tell
 * (it failed before reading, e.g. could not start: that is logged by the caller's later open,
 * not repaired). The child's report line counts, not only its exit code: a garbage page can
 * corrupt the child's heap so that even its exit fails and changes the code.
 */
function probeProblem(path: string): string | null {
  const r = spawnSync(process.execPath, [join(__dirname, 'lmdb-probe.js'), path], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  const reported = (r.stdout ?? '').split('\n').find((l) => l.startsWith(PROBE_DAMAGE_LINE));
  if (reported) return reported.slice(PROBE_DAMAGE_LINE.length) || 'reading it failed';
  if (r.signal && DAMAGE_SIGNALS.has(r.signal)) return `reading it killed a process with ${r.signal}`;
  if (r.status === PROBE_FOUND_DAMAGE) return 'reading it failed';
  return null;
}

/** Reads what a first read goes through: the list of named databases and each one's first key. */
function quickProbe(root: RootDatabase): void {
  for (const db of namedDatabases(root)) {
    for (const _ of db.getKeys({ limit: 1 })) break;
  }
}

function timestamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

function moveAside(path: string): string {
  const base = `${path}.damaged-${timestamp(new Date())}`;
  let target = base;
  for (let i = 2; existsSync(target); i++) target = `${base}-${i}`;
  renameSync(path, target);
  return target;
}

/**
 * Opens the environment at `path`, checked: `repair` says how thoroughly (OpenHotStoreOptions),
 * and `besideServer` that a server runs on its data directory now. Beside a server the child's
 * read of every entry is left out: that server checked the environment as it started and has
 * read and written it since, and what leaves damage (a power cut, a crash of the machine) would
 * have stopped it. The checks in the process (the header, every page) still run.
 */
function openChecked(path: string, repair: boolean, besideServer: boolean): { root: RootDatabase } | { problem: string } {
  const header = fileProblem(path, repair);
  if (header) return { problem: header };
  if (repair && !besideServer && existsSync(join(path, 'data.mdb'))) {
    const found = probeProblem(path);
    if (found) return { problem: found };
  }
  let root: RootDatabase;
  try {
    root = openRoot(path);
  } catch (err) {
    if (!isLmdbDamageError(err)) throw err;
    return { problem: (err as Error).message };
  }
  try {
    quickProbe(root);
    return { root };
  } catch (err) {
    // A healthy environment opened, so whatever its first read throws comes of its pages: a
    // garbage key may also decode into a value no database name can be (a TypeError here).
    void root.close();
    return { problem: (err as Error).message };
  }
}

/**
 * Runs `fn` while this process holds the data directory's open lock, waiting for another
 * process's open to finish first. Two processes opening the environment at the same moment (a
 * server starting while `perch keygen` runs, say) made LMDB fail a transaction of one of them now
 * and then (`MDB_PROBLEM`, or lmdb-js's "No transaction to renew"), and a probe that met such a
 * failure took a healthy environment for a damaged one and moved it aside from under the others;
 * one open at a time, neither was seen again (docs/architecture.md, "A damaged hot store"). The
 * lock is SQLite's, on a file of its own: the kernel drops it when its process ends however it
 * ends, so a crashed opener never leaves it held, and Node.js has no file lock of its own.
 */
function underOpenLock<T>(dataDir: string, fn: () => T): T {
  const lock = new Database(join(dataDir, OPEN_LOCK_FILE), { timeout: OPEN_LOCK_WAIT_MS });
  try {
    try {
      lock.exec('BEGIN EXCLUSIVE');
    } catch (err) {
      if (!isBusy(err)) throw err;
      throw new Error(`another process has been opening the hot store in ${dataDir} for ${OPEN_LOCK_WAIT_MS / 1000} s; is it stuck?`);
    }
    try {
      return fn();
    } finally {
      lock.exec('COMMIT');
    }
  } finally {
    lock.close();
  }
}

export function openHotStore(dataDir: string, options: OpenHotStoreOptions = {}): HotStore {
  const path = lmdbPath(dataDir);
  const repair = options.repair ?? false;
  const cache = new Map<string, LmdbDb<any, any>>();
  let root!: RootDatabase;
  function db<V, K extends import('lmdb').Key>(name: string, dbOptions: { encoding?: 'msgpack' | 'binary' } = {}): LmdbDb<V, K> {
    let d = cache.get(name);
    if (!d) {
      d = root.openDB({ name, compression: false, encoding: dbOptions.encoding ?? 'msgpack' });
      cache.set(name, d);
    }
    return d as LmdbDb<V, K>;
  }
  const { state, repaired } = underOpenLock(dataDir, () => {
    const besideServer = repair && serverRunsOn(dataDir);
    let opened = openChecked(path, repair, besideServer);
    let repaired: Repair | undefined;
    if ('problem' in opened) {
      if (!repair) throw new HotStoreDamagedError(`the hot store in ${path} is damaged (${opened.problem}); perch serve replaces it`);
      // A server keeps its environment open: moved aside, it would go on writing the renamed
      // files while this process started an empty store in their place.
      if (besideServer) {
        throw new HotStoreDamagedError(
          `the hot store in ${path} looks damaged (${opened.problem}), and a server is running on ${dataDir}: stop it, then start it again (perch serve replaces a damaged hot store as it starts)`,
        );
      }
      repaired = { reason: opened.problem, movedTo: moveAside(path) };
      opened = { root: openRoot(path) };
    }
    root = opened.root;
    const state = db<string, string>(STATE_DB);
    // Recorded before anything else is written, so that a command that repairs leaves the
    // rebuild to the next server start.
    if (repaired) state.putSync(REBUILD_PENDING, repaired.movedTo);
    return { state, repaired };
  });
  if (repaired) options.onRepaired?.(repaired);
  return {
    root,
    leases: db<NodeLease, number>('node_leases'),
    db,
    get recovered() {
      return state.get(REBUILD_PENDING) !== undefined;
    },
    markRebuilt: () => void state.removeSync(REBUILD_PENDING),
    close: () => root.close(),
  };
}

/**
 * Frees the reader slots of processes that ended without closing the environment (killed, or
 * crashed: the probe of a damaged store dies on purpose). LMDB only checks when an environment
 * is opened; until then such a slot keeps its snapshot, no page freed after it can be reused,
 * and every write grows the file (docs/memory.md). Returns the slots freed.
 */
export function clearStaleReaders(hot: HotStore): number {
  return hot.root.readerCheck();
}

/**
 * What lmdb-js rejects an un-awaited write with when its transaction could not commit, or the
 * promise it rejects with the cause (lmdb-js keeps its reject function on that promise).
 */
function isHotStoreCommitFailure(reason: unknown, promise: Promise<unknown>): boolean {
  if (reason instanceof Error && reason.message.startsWith('Commit failed') && 'commitError' in reason) return true;
  return typeof (promise as Promise<unknown> & { reject?: unknown }).reject === 'function';
}

let toleratingCommitFailures = false;
let lastCommitFailureLog = 0;

/**
 * lmdb-js rejects promises of its own, which no caller can handle, when a batch of un-awaited
 * writes cannot commit (a full disk): left alone, each would end the thread as an unhandled
 * rejection. The writes that fail are hot state (a click batch, a cache fill) and their callers
 * log them; this logs the rest at most once a second and keeps the thread serving. Any other
 * unhandled rejection still ends the thread, as before.
 */
export function tolerateHotStoreCommitFailures(): void {
  if (toleratingCommitFailures) return;
  toleratingCommitFailures = true;
  process.on('unhandledRejection', (reason, promise) => {
    if (!isHotStoreCommitFailure(reason, promise)) throw reason;
    const commitError = (reason as { commitError?: unknown } | null)?.commitError;
    if (commitError instanceof Promise) commitError.catch(() => {});
    const now = Date.now();
    if (now - lastCommitFailureLog >= 1000) {
      lastCommitFailureLog = now;
      log.error('hot store write failed', { error: reason instanceof Error ? reason.message : String(reason) });
    }
  });
}

/** Whether the hot store is open and answers a read (readiness, GET /readyz). */
export function hotStoreOpen(hot: HotStore): boolean {
  try {
    hot.leases.get(0);
    return (hot.root as unknown as { status?: string }).status === 'open';
  } catch {
    return false;
  }
}
