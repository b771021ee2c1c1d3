// Pipelined durability for the writer's group commits. The writer's connection commits
// with synchronous=NORMAL, so a commit only appends its frames to the write-ahead log; this class
// then syncs the log with fdatasync on libuv's thread pool and reports which commits it covered.
// While one sync runs, the writer's thread goes on with other work and writes queue up; the writer
// commits them as one group when the sync ends (whenFree), and the next sync covers it. A commit
// is acknowledged only after a sync that started after it, exactly the guarantee of
// synchronous=FULL, without the writer sitting idle during every sync. (Checkpoints under NORMAL
// still sync the log and the database file themselves before the log is reused, so nothing a sync
// covered can be lost to one.)
import { closeSync, fdatasync, openSync } from 'node:fs';

export type SyncDone = (err: Error | null) => void;

export class WalSync {
  private fd: number | null = null;
  private running = false;
  /** Callbacks of commits made since the running sync started: the next sync covers them. */
  private next: SyncDone[] = [];
  private idle: Array<() => void> = [];
  /** A commit put off until the running sync ends (whenFree). */
  private waiting: (() => void) | null = null;
  /** The first failed sync's error: after it, nothing can be called durable, by any later sync. */
  private failure: Error | null = null;
  /** Syncs completed (reported when the writer stops). */
  syncs = 0;
  /** How long a sync takes lately, in ms (a moving average; 1 before the first). */
  syncMs = 1;

  constructor(private readonly walPath: string) {}

  /** Calls `done` once everything committed before this call is on disk (or the sync failed). */
  afterCommit(done: SyncDone): void {
    if (this.failure) return done(this.failure);
    this.next.push(done);
    if (!this.running) this.start();
  }

  /** Whether a sync is running now. */
  get busy(): boolean {
    return this.running;
  }

  /**
   * Runs `commit` as soon as no sync is running: at once when none is, else when the running one
   * ends, before the next one starts, so that the next sync covers it. One commit waits at a time.
   */
  whenFree(commit: () => void): void {
    if (!this.running) return commit();
    this.waiting = commit;
  }

  /** Resolves when no sync is running or waiting. */
  drained(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private start(): void {
    const covered = this.next;
    this.next = [];
    this.running = true;
    let fd: number;
    try {
      // Opened on first use: the log exists once the first commit has been written. The same
      // file stays in place while the writer's connection is open (SQLite only truncates and
      // reuses it), so one descriptor serves for the server's life.
      fd = this.fd ??= openSync(this.walPath, 'r+');
    } catch (err) {
      this.finish(covered, err as Error);
      return;
    }
    const started = performance.now();
    fdatasync(fd, (err) => {
      if (!err) {
        this.syncs++;
        this.syncMs += (performance.now() - started - this.syncMs) / 8;
      }
      this.finish(covered, err);
    });
  }

  private finish(covered: SyncDone[], err: Error | null): void {
    this.running = false;
    if (err) {
      // The kernel may have dropped pages that later commits depend on: fail those too.
      this.failure ??= err;
      covered = covered.concat(this.next);
      this.next = [];
    }
    for (const done of covered) done(err);
    // The commit put off for this sync: its afterCommit may start the next sync itself.
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
    if (!this.running && this.next.length > 0) this.start();
    if (!this.running) {
      const idle = this.idle;
      this.idle = [];
      for (const resolve of idle) resolve();
    }
  }
}
