// The writer: the one place where the server's request path writes SQLite. It gathers what its
// clients sent, commits it as one group (group-commit.ts) and answers each client once a sync of
// the write-ahead log has covered that commit (wal-sync.ts). Syncs run beside the thread's other
// work: writes that arrive during a sync are committed as one group when it ends. While many
// writes are in flight, a small group waits a few milliseconds for more (gather.ts).
//
// The writer knows no capability. Capabilities give it named operations (operations.ts), jobs of
// its own (WriterJob: an operation it queues itself some time after others committed, such as the
// microblog's filing of new posts under their authors), and signals (WriterSignal: a shared
// counter raised once a sync made some change durable, such as new outbox events, so that
// background work waiting on it starts at once).
//
// It runs on a thread of its own when the server has several HTTP threads (thread.ts), and beside
// the HTTP server when there is only one (server/http-server.ts, on the main thread): a hop between
// threads costs a wake-up each way, which on a small machine is a large part of a write's cost.
import type { MessagePort } from 'node:worker_threads';
import { log, errorFields } from '../log';
import { isBusy, openSqlite, walPath, type Sqlite } from '../store/sqlite';
import { HttpError, diskFull, isDiskFull, unavailable } from '../http/errors';
import { WalSync } from './wal-sync';
import { writeExecutor, type WriteSet } from './operations';
import { GroupCommit } from './group-commit';
import { Gathering, type GatherPolicy } from './gather';
import { WriterClient } from './client';
import { toWire, type Outcome, type WriteReply, type WriteRequest } from './protocol';

/** Where a group's answers for one sender go. */
type Deliver = (reply: WriteReply) => void;

/**
 * An operation the writer queues for itself, `delayMs` after operations named in `after` were
 * committed, or as soon as `batch` of them wait: work that is cheaper done for many writes at
 * once than in each. Nobody awaits it.
 */
export interface WriterJob {
  name: string;
  op: string;
  args(): unknown;
  after: readonly string[];
  delayMs: number;
  batch: number;
  /** True when work is left over (from before a crash): the job then runs at start and at stop. */
  pending(): boolean;
}

/** A change that background work waits for: `moved` is asked after each commit. */
export interface WriterSignal {
  name: string;
  /** True when the group just committed made the change (and resets it). */
  moved(): boolean;
}

/** What the capabilities give the writer, each bound to its connection. */
export interface WriterSetup {
  writes: readonly WriteSet[];
  jobs?: ReadonlyArray<(db: Sqlite) => WriterJob[]>;
  signals?: ReadonlyArray<(db: Sqlite) => WriterSignal[]>;
}

export interface WriterOptions {
  dataDir: string;
  setup: WriterSetup;
  /**
   * [commits, writes, writes refused for a full disk] of requested writes, read by the supervisor
   * for /metrics without a message.
   */
  stats: Float64Array;
  /** Called once the 503s of a failed sync are on their way: the server must stop. */
  onSyncFailure(): void;
  /** Called after a sync that made a signal's change durable, before the writes are answered. */
  raise?(signal: string): void;
  /** When a small group waits for more writes (gather.ts); the default outside tests. */
  gather?: GatherPolicy;
}

/** How soon a group tries again when another connection holds SQLite's write lock. */
const BUSY_RETRY_MS = 1;

interface JobState {
  job: WriterJob;
  /** Operations that made it due since it was last queued. */
  waiting: number;
  timer: NodeJS.Timeout | null;
}

export class Writer {
  private readonly db: Sqlite;
  private readonly wal: WalSync;
  private readonly group: GroupCommit;
  private ops: Array<[string, unknown]> = [];
  /** Who sent each operation; null for the writer's own jobs, which nobody awaits. */
  private from: Array<[Deliver, number] | null> = [];
  private scheduled = false;
  private readonly jobs: JobState[];
  /** Jobs by the operations that make them due. */
  private readonly jobsAfter = new Map<string, JobState[]>();
  private readonly signals: WriterSignal[];
  private busyRetry: NodeJS.Timeout | null = null;
  private stopping = false;
  /** Set by a failed sync: every later write is refused, none committed. */
  private failed = false;
  private readonly ports: MessagePort[] = [];
  private readonly gathering: Gathering;
  /** Requested writes received and not yet answered (queued, or committed and waiting for a sync). */
  private inFlight = 0;
  /** Requested writes in `ops`, and when the first of them arrived (performance.now()). */
  private requestedQueued = 0;
  private firstQueuedAt = 0;
  /** The commit of a group that waits for more writes (gather.ts). */
  private gatherTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: WriterOptions) {
    this.db = openSqlite(opts.dataDir);
    // This connection's commits only append to the log; WalSync makes them durable before any answer.
    this.db.pragma('synchronous = NORMAL');
    // Never sleep in SQLite's busy handler: the writer may share its thread with requests, and a
    // CLI command or pool task holding the write lock would stall them all. A group that finds
    // the lock taken waits on a timer instead (flush).
    this.db.pragma('busy_timeout = 0');
    this.wal = new WalSync(walPath(opts.dataDir));
    this.group = new GroupCommit(this.db, writeExecutor(this.db, opts.setup.writes));
    this.gathering = new Gathering(opts.gather);
    this.jobs = (opts.setup.jobs ?? []).flatMap((bind) => bind(this.db)).map((job) => ({ job, waiting: 0, timer: null }));
    for (const state of this.jobs) {
      for (const op of state.job.after) {
        const list = this.jobsAfter.get(op) ?? [];
        list.push(state);
        this.jobsAfter.set(op, list);
      }
    }
    this.signals = (opts.setup.signals ?? []).flatMap((bind) => bind(this.db));
    // Work that a crash left undone.
    for (const state of this.jobs) if (state.job.pending()) this.queueJob(state);
  }

  /** Takes the writes another thread sends on this port, and answers there. */
  listen(port: MessagePort): void {
    this.ports.push(port);
    const deliver: Deliver = (reply) => port.postMessage(reply);
    port.on('message', (request: WriteRequest) => this.receive(deliver, request));
  }

  /**
   * A client for the writer's own thread. It sends its writes once the code that made them has
   * run (a microtask: for the router, every request parsed in the turn), and they are committed as
   * it sends them, without waiting for the next turn.
   */
  localClient(): WriterClient {
    const client: WriterClient = new WriterClient({
      send: (request) => {
        this.receive(deliver, request);
        this.flush();
      },
      close: () => {},
      sameThread: true,
    });
    const deliver: Deliver = (reply) => client.receive(reply);
    return client;
  }

  /** Commits what is left, runs the jobs with work left, waits for the last sync, then closes. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const state of this.jobs) if (state.timer) clearTimeout(state.timer);
    this.closeGather();
    await this.flushAll();
    if (!this.failed) {
      let queued = false;
      for (const state of this.jobs) {
        if (!state.job.pending()) continue;
        this.queueJob(state);
        queued = true;
      }
      if (queued) await this.flushAll();
    }
    if (this.busyRetry) clearTimeout(this.busyRetry);
    await this.wal.drained();
    this.wal.close();
    for (const port of this.ports) port.close();
    try {
      this.db.close();
    } catch (err) {
      log.error('closing the writer database failed', errorFields(err));
    }
    log.debug('writer stopped', { commits: this.group.stats.commits, writes: this.group.stats.writes, syncs: this.wal.syncs });
  }

  /** Commits everything queued, waiting out another connection's write lock if need be. */
  private async flushAll(): Promise<void> {
    this.flush();
    while (this.ops.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      this.flush();
    }
  }

  private receive(deliver: Deliver, request: WriteRequest): void {
    for (let i = 0; i < request.length; i += 3) this.queue(request[i + 1] as string, request[i + 2], [deliver, request[i] as number]);
  }

  private queue(op: string, args: unknown, sender: [Deliver, number] | null): void {
    this.ops.push([op, args]);
    this.from.push(sender);
    if (sender) {
      const now = performance.now();
      this.inFlight++;
      if (this.requestedQueued++ === 0) this.firstQueuedAt = now;
      this.gathering.arrived(now, this.inFlight);
      // A waiting group that is now complete commits in this turn, with what else it brings.
      if (this.gatherTimer && this.gatherWait(now) === 0) {
        this.closeGather();
        setImmediate(this.flush);
      }
    }
    if (!this.scheduled) {
      this.scheduled = true;
      // After every message already delivered in this turn, from every thread, has been queued.
      setImmediate(this.flush);
    }
  }

  private queueJob(state: JobState): void {
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    state.waiting = 0;
    this.queue(state.job.op, state.job.args(), null);
  }

  /** Counts a group's committed operations towards the jobs they make due. */
  private noteCommitted(op: string): void {
    const states = this.jobsAfter.get(op);
    if (!states) return;
    for (const state of states) {
      state.waiting++;
      if (state.waiting >= state.job.batch) this.queueJob(state);
      else state.timer ??= setTimeout(() => this.queueJob(state), state.job.delayMs);
    }
  }

  /** How much longer the queued group waits for more writes (gather.ts): 0 to commit now. */
  private gatherWait(now: number): number {
    return this.gathering.waitMs(now, this.requestedQueued, this.firstQueuedAt, this.wal.syncMs);
  }

  /** Drops the timer of a waiting group (its commit is scheduled otherwise, or not needed). */
  private closeGather(): void {
    if (!this.gatherTimer) return;
    clearTimeout(this.gatherTimer);
    this.gatherTimer = null;
  }

  private readonly flush = (): void => {
    if (!this.stopping && !this.failed && this.requestedQueued > 0) {
      const wait = this.gatherWait(performance.now());
      if (wait > 0) {
        this.scheduled = true;
        this.gatherTimer ??= setTimeout(() => {
          this.gatherTimer = null;
          this.flush();
        }, wait);
        return;
      }
    }
    this.closeGather();
    if (this.wal.busy && !this.failed) {
      // Committed now, this group would only wait for the next sync: committed when the running
      // sync ends, it joins what comes meanwhile, in fewer and larger transactions (each rewrites
      // the pages it touches, and opens and closes once).
      this.scheduled = true;
      this.wal.whenFree(this.flush);
      return;
    }
    this.scheduled = false;
    if (this.ops.length === 0) return;
    const batch = this.ops;
    const senders = this.from;
    const requested = this.requestedQueued;
    const firstAt = this.firstQueuedAt;
    this.ops = [];
    this.from = [];
    this.requestedQueued = 0;
    let out: Outcome[];
    if (this.failed) {
      // After a failed sync nothing more is committed: every write is refused, and answered
      // below like the writes of that sync (the log sync fails at once from now on).
      out = batch.map(() => ({ ok: false, error: notDurable() }));
    } else {
      try {
        out = this.group.commit(batch);
      } catch (err) {
        if (!isBusy(err)) throw err;
        // Nothing ran: put the group back in front of what came since, and try again shortly.
        this.ops = batch.concat(this.ops);
        this.from = senders.concat(this.from);
        this.requestedQueued = requested;
        this.firstQueuedAt = firstAt;
        this.busyRetry ??= setTimeout(() => {
          this.busyRetry = null;
          this.flush();
        }, BUSY_RETRY_MS);
        return;
      }
      // The metrics count what was asked for: groups with requested writes, and those writes.
      if (requested > 0) {
        this.opts.stats[0]++;
        this.opts.stats[1] += requested;
      }
    }
    const replies = new Map<Deliver, WriteReply>();
    const countJobs = this.jobsAfter.size > 0 && !this.stopping && !this.failed;
    let full: HttpError | null = null;
    for (let i = 0; i < out.length; i++) {
      let o = out[i];
      if (!o.ok && isDiskFull(o.error)) {
        // Nothing of it was committed, and it will succeed once there is room: 503, one log
        // line per group, and the count in /metrics.
        full ??= diskFull(o.error, 'writes');
        o = { ok: false, error: full };
        if (senders[i]) this.opts.stats[2]++;
      }
      if (!o.ok && !(o.error instanceof HttpError)) log.error('write failed', { op: batch[i][0], ...errorFields(o.error) });
      if (o.ok && countJobs) this.noteCommitted(batch[i][0]);
      const sender = senders[i];
      if (!sender) continue;
      const [deliver, n] = sender;
      let reply = replies.get(deliver);
      if (!reply) replies.set(deliver, (reply = []));
      if (o.ok) reply.push(n, 1, o.value);
      else reply.push(n, 0, toWire(o.error));
    }
    let raised: string[] | null = null;
    if (!this.failed) for (const s of this.signals) if (s.moved()) (raised ??= []).push(s.name);
    this.wal.afterCommit((err) => {
      this.inFlight -= requested;
      if (!err) {
        // Raised before the answers: a client that got its answer and reads next finds the
        // signal moved (the timeline reader relies on it for one's own new post).
        if (raised && this.opts.raise) for (const name of raised) this.opts.raise(name);
        for (const [deliver, reply] of replies) deliver(reply);
        return;
      }
      // After a failed sync the kernel may have dropped the unsynced pages: nothing since the last
      // good sync can be called durable, now or by a later sync. Answer 503 and stop the writer;
      // the supervisor then shuts the server down rather than serve on a store in doubt.
      const first = !this.failed;
      this.failed = true;
      if (first) log.error('syncing the write-ahead log failed; stopping', errorFields(err));
      const failed = toWire(notDurable());
      for (const [deliver, reply] of replies) {
        for (let i = 1; i < reply.length; i += 3) if (reply[i] === 1) (reply[i] = 0), (reply[i + 1] = failed);
        deliver(reply);
      }
      if (first) this.opts.onSyncFailure();
    });
  };
}

function notDurable(): HttpError {
  return unavailable(1, 'The write could not be made durable; try again shortly.');
}
