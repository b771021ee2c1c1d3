// The writer: the one place where the server's request path writes SQLite. It gathers what its
// channels sent, commits it as one group (social/group-commit.ts) and answers each channel once a
// sync of the write-ahead log has covered that commit (store/wal-sync.ts). Syncs run beside the
// commits: the next group is committed while the previous one is being synced. The writer also
// files new posts under their authors (social/store.ts indexAuthorPosts), a few milliseconds after
// they were committed and many at once, as its own operation in a group.
//
// It runs on a thread of its own when the server has several HTTP threads (writer-thread.ts), and
// inside the HTTP thread when there is only one (http-thread.ts): a hop between threads costs a
// wake-up each way, which on a small machine was a fifth of the rate of post creation.
import type { MessagePort } from 'node:worker_threads';
import { log, errorFields } from '../log';
import { openSqlite, walPath, type Sqlite } from '../store/sqlite';
import { WalSync } from '../store/wal-sync';
import { HttpError, unavailable } from '../http/errors';
import { writeExecutor, type WriteOpName } from './write-ops';
import { GroupCommit, WriterClient, isBusy, toWire, type Outcome, type WriteReply, type WriteRequest } from '../social/group-commit';
import { hasUnfiledPosts } from '../social/store';

/** Where a group's answers for one sender go. */
type Deliver = (reply: WriteReply) => void;

/**
 * How long new posts wait to be filed under their authors. A filing rewrites a page per author
 * whatever the number of posts it files for them, so a filing of many posts costs each less:
 * measured alone, the writer's time per post at groups of 50 was 7.3–8.1 us when it filed every
 * 1,000 posts and 6.4–6.6 us every 5,000 (5.2 without filing). The wait is bounded in posts as
 * well, because reads scan the unfiled posts' events (docs/social.md, "Posts").
 */
const AUTHOR_FILING_DELAY_MS = 100;
/** Posts that are filed at once, without waiting for the delay. */
const AUTHOR_FILING_POSTS = 2000;
/** How soon a group tries again when another connection holds SQLite's write lock. */
const BUSY_RETRY_MS = 1;

export class Writer {
  private readonly db: Sqlite;
  private readonly wal: WalSync;
  private readonly group: GroupCommit;
  private ops: Array<[WriteOpName, unknown]> = [];
  /** Who sent each operation; null for the writer's own (the author filing), which nobody awaits. */
  private from: Array<[Deliver, number] | null> = [];
  private scheduled = false;
  private filingTimer: NodeJS.Timeout | null = null;
  /** Posts committed since the last filing was queued. */
  private unfiled = 0;
  private busyRetry: NodeJS.Timeout | null = null;
  private stopping = false;
  /** Set by a failed sync: every later write is refused, none committed. */
  private failed = false;
  private readonly ports: MessagePort[] = [];

  /**
   * `stats`: [commits, writes] of requested writes, read by the supervisor for /metrics without a
   * message round trip. `onSyncFailure` is called once the 503s of a failed sync are on their way:
   * the server must stop, since the writer refuses everything from then on. `newPosts`, shared
   * with the supervisor, counts the syncs that made new posts durable: its fan-out job waits on it
   * (Atomics), so a post's fan-out starts as soon as the post is answered, not at the job's next tick.
   */
  constructor(
    dataDir: string,
    private readonly stats: Float64Array,
    private readonly onSyncFailure: () => void,
    private readonly newPosts: Int32Array | null = null,
  ) {
    this.db = openSqlite(dataDir);
    // This connection's commits only append to the log; WalSync makes them durable before any answer.
    this.db.pragma('synchronous = NORMAL');
    // Never sleep in SQLite's busy handler: the writer may share its thread with requests, and a
    // CLI command or pool task holding the write lock (a click drain can take tens of ms) would
    // stall them all. A group that finds the lock taken waits on a timer instead (flush).
    this.db.pragma('busy_timeout = 0');
    this.wal = new WalSync(walPath(dataDir));
    this.group = new GroupCommit(this.db, writeExecutor(this.db));
    // Posts committed before a crash may not have been filed yet.
    if (hasUnfiledPosts(this.db)) this.fileAuthorPosts();
  }

  /** Takes the writes another thread sends on this port, and answers there. */
  listen(port: MessagePort): void {
    this.ports.push(port);
    const deliver: Deliver = (reply) => port.postMessage(reply);
    port.on('message', (request: WriteRequest) => this.receive(deliver, request));
  }

  /**
   * A client for the writer's own thread. Its writes are committed as soon as it sends them (it
   * sends once per event-loop turn, with everything of that turn), without waiting a turn more.
   */
  localClient(): WriterClient {
    const client: WriterClient = new WriterClient({
      send: (request) => {
        this.receive(deliver, request);
        this.flush();
      },
      close: () => {},
    });
    const deliver: Deliver = (reply) => client.receive(reply);
    return client;
  }

  /** Commits what is left, files its posts, waits for the last sync, then closes the connection. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.filingTimer) clearTimeout(this.filingTimer);
    await this.flushAll();
    if (!this.failed && hasUnfiledPosts(this.db)) {
      this.fileAuthorPosts();
      await this.flushAll();
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
    for (let i = 0; i < request.length; i += 3) this.queue(request[i + 1] as WriteOpName, request[i + 2], [deliver, request[i] as number]);
  }

  private queue(op: WriteOpName, args: unknown, sender: [Deliver, number] | null): void {
    this.ops.push([op, args]);
    this.from.push(sender);
    if (!this.scheduled) {
      this.scheduled = true;
      // After every message already delivered in this turn, from every thread, has been queued.
      setImmediate(this.flush);
    }
  }

  private readonly fileAuthorPosts = (): void => {
    if (this.filingTimer) clearTimeout(this.filingTimer);
    this.filingTimer = null;
    this.unfiled = 0;
    this.queue('indexAuthorPosts', { now: new Date().toISOString() }, null);
  };

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.ops.length === 0) return;
    const batch = this.ops;
    const senders = this.from;
    this.ops = [];
    this.from = [];
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
        this.busyRetry ??= setTimeout(() => {
          this.busyRetry = null;
          this.flush();
        }, BUSY_RETRY_MS);
        return;
      }
      // The metrics count what was asked for: groups with requested writes, and those writes.
      const requested = senders.reduce((n, s) => (s ? n + 1 : n), 0);
      if (requested > 0) {
        this.stats[0]++;
        this.stats[1] += requested;
      }
    }
    const replies = new Map<Deliver, WriteReply>();
    let postsCreated = 0;
    for (let i = 0; i < out.length; i++) {
      const o = out[i];
      if (!o.ok && !(o.error instanceof HttpError)) log.error('write failed', { op: batch[i][0], ...errorFields(o.error) });
      if (o.ok && batch[i][0] === 'createPost') postsCreated++;
      const sender = senders[i];
      if (!sender) continue;
      const [deliver, n] = sender;
      let reply = replies.get(deliver);
      if (!reply) replies.set(deliver, (reply = []));
      if (o.ok) reply.push(n, 1, o.value);
      else reply.push(n, 0, toWire(o.error));
    }
    if (postsCreated > 0 && !this.stopping) {
      this.unfiled += postsCreated;
      if (this.unfiled >= AUTHOR_FILING_POSTS) this.fileAuthorPosts();
      else this.filingTimer ??= setTimeout(this.fileAuthorPosts, AUTHOR_FILING_DELAY_MS);
    }
    this.wal.afterCommit((err) => {
      if (!err) {
        for (const [deliver, reply] of replies) deliver(reply);
        if (postsCreated > 0 && this.newPosts) {
          Atomics.add(this.newPosts, 0, 1);
          Atomics.notify(this.newPosts, 0);
        }
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
      if (first) this.onSyncFailure();
    });
  };
}

function notDurable(): HttpError {
  return unavailable(1, 'The write could not be made durable; try again shortly.');
}
