// Who has a WebSocket open, for the Web Push decision ("no open WebSocket at that moment"), which
// is made in a pool thread while the sockets live in the HTTP threads. Each HTTP thread keeps, in
// LMDB, the number of sockets it holds per user under a key of its own (user, process, thread):
// no two threads write one key, so a plain write is enough, and a key whose process is gone (a
// crash) is ignored by readers and cleared by the next start.
import type { HotStore, LmdbDb } from '../store/lmdb';
import { errorFields, log } from '../log';

/** A presence record that could not be written (a full disk): pushes may go to an open socket's user. */
function onPresenceWriteError(err: unknown): void {
  log.error('presence write failed', errorFields(err));
}

const DB = 'ws_presence';
const SEPARATOR = '\u0000';

function presenceDb(hot: HotStore): LmdbDb<number, string> {
  return hot.db<number, string>(DB);
}

function pidOf(key: string): number {
  const instance = key.slice(key.indexOf(SEPARATOR) + 1);
  return Number(instance.slice(0, instance.indexOf(':')));
}

const liveness = new Map<number, { alive: boolean; until: number }>();

/** Whether process `pid` exists (asked at most once a second per pid). */
function isAlive(pid: number, now = Date.now()): boolean {
  if (pid === process.pid) return true;
  const known = liveness.get(pid);
  if (known && known.until > now) return known.alive;
  let alive: boolean;
  try {
    process.kill(pid, 0);
    alive = true;
  } catch (err) {
    alive = (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  liveness.set(pid, { alive, until: now + 1000 });
  return alive;
}

/** One HTTP thread's record of its open sockets per user. */
export class ThreadPresence {
  private readonly db: LmdbDb<number, string>;
  private readonly instance: string;
  private readonly counts = new Map<string, number>();

  constructor(hot: HotStore, threadIndex: number) {
    this.db = presenceDb(hot);
    this.instance = `${process.pid}:${threadIndex}`;
  }

  private key(userId: string): string {
    return userId + SEPARATOR + this.instance;
  }

  /**
   * Written synchronously: once a socket's upgrade is answered, a notification that follows finds
   * it present (and is not also pushed).
   */
  opened(userId: string): void {
    const n = (this.counts.get(userId) ?? 0) + 1;
    this.counts.set(userId, n);
    try {
      this.db.putSync(this.key(userId), n);
    } catch (err) {
      onPresenceWriteError(err);
    }
  }

  closed(userId: string): void {
    const n = (this.counts.get(userId) ?? 0) - 1;
    if (n > 0) {
      this.counts.set(userId, n);
      this.db.put(this.key(userId), n).catch(onPresenceWriteError);
    } else {
      this.counts.delete(userId);
      this.db.remove(this.key(userId)).catch(onPresenceWriteError);
    }
  }

  /** Removes this thread's records (as it stops). */
  clear(): void {
    for (const userId of this.counts.keys()) this.db.removeSync(this.key(userId));
    this.counts.clear();
  }
}

/** Whether `userId` has a WebSocket open on any HTTP thread of a live process. */
export function hasOpenSocket(hot: HotStore, userId: string): boolean {
  const db = presenceDb(hot);
  for (const { key, value } of db.getRange({ start: userId + SEPARATOR, end: userId + '\u0001' })) {
    if (value > 0 && isAlive(pidOf(key))) return true;
  }
  return false;
}

/** Removes the records of processes that are gone, and this process's (before its threads start). */
export function clearStalePresence(hot: HotStore): number {
  const db = presenceDb(hot);
  let removed = 0;
  for (const { key } of db.getRange({})) {
    const pid = pidOf(key);
    if (pid === process.pid || !isAlive(pid)) {
      db.removeSync(key);
      removed++;
    }
  }
  return removed;
}
