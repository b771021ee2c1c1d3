// Whether a server runs on a data directory, as the kernel tells it: every `perch serve` holds a
// shared lock on `serve.lock` for as long as its process lives. A record in a store (the servers
// in LMDB, for `perch status`) can outlive its process and cannot be read from a damaged store;
// a lock cannot: the kernel drops it when its process ends, however it ends. The lock is SQLite's
// (a read transaction left open on a file with no tables), since Node.js has no file lock of its
// own. Several servers may hold it at once; a process that would take the whole directory for
// itself (a repair of the hot store) tries for an exclusive lock, which any holder refuses.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isBusy } from './sqlite';

export const SERVER_LOCK_FILE = 'serve.lock';

/** How long a server waits for a process that is looking (serverRunsOn) to let go. */
const HOLD_WAIT_MS = 5000;

export interface ServerLock {
  release(): void;
}

/** Marks this process as a server on `dataDir` until release() or the process's end. */
export function holdServerLock(dataDir: string): ServerLock {
  const db = new Database(join(dataDir, SERVER_LOCK_FILE), { timeout: HOLD_WAIT_MS });
  try {
    db.exec('BEGIN');
    // A read is what takes the shared lock; BEGIN alone takes none.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    db.close();
    throw err;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      db.exec('COMMIT');
      db.close();
    },
  };
}

/**
 * Whether a process (this one included) holds the server lock of `dataDir` now. It never waits:
 * the look is one attempt at the exclusive lock, given back at once.
 */
export function serverRunsOn(dataDir: string): boolean {
  const path = join(dataDir, SERVER_LOCK_FILE);
  // A server makes the file as it starts: without it, no server ever ran here.
  if (!existsSync(path)) return false;
  const db = new Database(path, { timeout: 0, fileMustExist: true });
  try {
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return false;
  } catch (err) {
    if (isBusy(err)) return true;
    throw err;
  } finally {
    db.close();
  }
}
