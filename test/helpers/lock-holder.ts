// Another process that holds a data directory's server lock, as a running `perch serve` does, for
// tests that need a server on the directory without what a server does to it.
import { spawn } from 'node:child_process';
import { endWithTestProcess } from './server';

export interface ServerLockHolder {
  /** Resolves once the lock is held. */
  held: Promise<void>;
  /** Kills the holder (SIGKILL, as a crash would end it); resolves when it is gone. */
  kill(): Promise<void>;
}

export function serverLockHolder(dataDir: string): ServerLockHolder {
  const script = `
    const { holdServerLock } = require(${JSON.stringify(require.resolve('../../src/store/server-lock'))});
    holdServerLock(${JSON.stringify(dataDir)});
    process.stdout.write('held\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  // It never ends by itself: it ends with the test's process if a test fails first.
  endWithTestProcess(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const held = new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code} before holding`)));
  });
  return {
    held,
    kill() {
      child.kill('SIGKILL');
      return exited;
    },
  };
}
