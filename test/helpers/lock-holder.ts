// Another process that takes a lock and holds it, for tests of what this process does beside it:
// the hot store's open lock (as an open holds it) or a data directory's server lock (as a running
// `perch serve` holds it, without what a server does to the directory).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { OPEN_LOCK_FILE } from '../../src/store/lmdb';
import { endWithTestProcess } from './server';

export interface LockHolder {
  child: ChildProcess;
  /** Resolves once the lock is held. */
  held: Promise<void>;
  /** Resolves when the holder has ended, however it ended. */
  exited: Promise<void>;
  /** Kills the holder (SIGKILL, as a crash would end it); resolves when it is gone. */
  kill(): Promise<void>;
}

/** Runs `script`, which takes a lock and then writes `held` on stdout. */
function holderProcess(script: string): LockHolder {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  // A holder that never ends by itself ends with the test's process if a test fails first.
  endWithTestProcess(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const held = new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code} before holding`)));
  });
  return {
    child,
    held,
    exited,
    kill() {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

/**
 * Takes the data directory's hot store open lock; after `holdMs` writes `marker` and lets go, and
 * with no `holdMs` holds it until killed.
 */
export function openLockHolder(dataDir: string, marker: string, holdMs?: number): LockHolder {
  return holderProcess(`
    const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
    const lock = new Database(${JSON.stringify(join(dataDir, OPEN_LOCK_FILE))});
    lock.exec('BEGIN EXCLUSIVE');
    process.stdout.write('held\\n');
    const hold = ${holdMs === undefined ? 'null' : holdMs};
    if (hold === null) setInterval(() => {}, 1000);
    else setTimeout(() => {
      require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'let go');
      lock.exec('COMMIT');
    }, hold);`);
}

/** Takes the data directory's server lock and holds it until killed. */
export function serverLockHolder(dataDir: string): LockHolder {
  return holderProcess(`
    const { holdServerLock } = require(${JSON.stringify(require.resolve('../../src/store/server-lock'))});
    holdServerLock(${JSON.stringify(dataDir)});
    process.stdout.write('held\\n');
    setInterval(() => {}, 1000);`);
}
