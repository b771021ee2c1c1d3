// Entry point of the writer thread: the one place where the server's request path writes SQLite.
// Each HTTP thread has a MessagePort to it (created by the supervisor); the writer gathers what
// all of them sent, commits it as one group (social/group-commit.ts) and answers each thread
// once a sync of the write-ahead log has covered that commit (store/wal-sync.ts). Syncs run
// beside the commits: the next group is committed while the previous one is being synced.
// The writer also files new posts under their authors (social/store.ts indexAuthorPosts), a few
// milliseconds after they were committed and many at once, as its own operation in a group.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { setLogLevel, log, errorFields } from '../log';
import { openSqlite, walPath } from '../store/sqlite';
import { WalSync } from '../store/wal-sync';
import { HttpError, unavailable } from '../http/errors';
import { writeExecutor, type WriteOpName } from './write-ops';
import { GroupCommit, toWire, type WriteReply, type WriteRequest } from '../social/group-commit';
import { hasUnfiledPosts } from '../social/store';
import type { ToWriter, WriterData, FromWriter } from './messages';

const data = workerData as WriterData;
const control = parentPort!;
setLogLevel(data.logLevel);

const db = openSqlite(data.dataDir);
// This connection's commits only append to the log; WalSync makes them durable before any answer.
db.pragma('synchronous = NORMAL');
const wal = new WalSync(walPath(data.dataDir));
const group = new GroupCommit(db, writeExecutor(db));
// [commits, writes] of requested writes, read by the supervisor for /metrics without a message
// round trip.
const stats = new Float64Array(data.stats);

/** How long new posts wait to be filed under their authors: longer files more per commit. */
const AUTHOR_FILING_DELAY_MS = 20;

let ops: Array<[WriteOpName, unknown]> = [];
/** Who sent each operation; null for the writer's own (the author filing), which nobody awaits. */
let from: Array<[MessagePort, number] | null> = [];
let scheduled = false;
let filingTimer: NodeJS.Timeout | null = null;
let stopping = false;

function queue(op: WriteOpName, args: unknown, sender: [MessagePort, number] | null): void {
  ops.push([op, args]);
  from.push(sender);
  if (!scheduled) {
    scheduled = true;
    // After every message already delivered in this turn, from every thread, has been queued.
    setImmediate(flush);
  }
}

function receive(port: MessagePort, request: WriteRequest): void {
  for (let i = 0; i < request.length; i += 3) queue(request[i + 1] as WriteOpName, request[i + 2], [port, request[i] as number]);
}

function fileAuthorPosts(): void {
  filingTimer = null;
  queue('indexAuthorPosts', { now: new Date().toISOString() }, null);
}

function flush(): void {
  scheduled = false;
  if (ops.length === 0) return;
  const batch = ops;
  const senders = from;
  ops = [];
  from = [];
  const out = group.commit(batch);
  // The metrics count what was asked for: groups with requested writes, and those writes.
  const requested = senders.reduce((n, s) => (s ? n + 1 : n), 0);
  if (requested > 0) {
    stats[0]++;
    stats[1] += requested;
  }
  const replies = new Map<MessagePort, WriteReply>();
  let postsCreated = false;
  for (let i = 0; i < out.length; i++) {
    const o = out[i];
    if (!o.ok && !(o.error instanceof HttpError)) log.error('write failed', { op: batch[i][0], ...errorFields(o.error) });
    if (o.ok && batch[i][0] === 'createPost') postsCreated = true;
    const sender = senders[i];
    if (!sender) continue;
    const [port, n] = sender;
    let reply = replies.get(port);
    if (!reply) replies.set(port, (reply = []));
    if (o.ok) reply.push(n, 1, o.value);
    else reply.push(n, 0, toWire(o.error));
  }
  if (postsCreated && !filingTimer && !stopping) filingTimer = setTimeout(fileAuthorPosts, AUTHOR_FILING_DELAY_MS);
  wal.afterCommit((err) => {
    if (!err) {
      for (const [port, reply] of replies) port.postMessage(reply);
      return;
    }
    // After a failed sync the kernel may have dropped the unsynced pages: nothing since the last
    // good sync can be called durable, now or by a later sync. Answer 503 and stop the writer;
    // the supervisor then shuts the server down rather than serve on a store in doubt.
    log.error('syncing the write-ahead log failed; stopping', errorFields(err));
    const failed = toWire(unavailable(1, 'The write could not be made durable; try again shortly.'));
    for (const [port, reply] of replies) {
      for (let i = 1; i < reply.length; i += 3) if (reply[i] === 1) (reply[i] = 0), (reply[i + 1] = failed);
      port.postMessage(reply);
    }
    process.exit(1);
  });
}

for (const port of data.ports) port.on('message', (m: WriteRequest) => receive(port, m));
// Posts committed before a crash may not have been filed yet.
if (hasUnfiledPosts(db)) fileAuthorPosts();

control.on('message', (m: ToWriter) => {
  if (m.type !== 'stop') return;
  // The HTTP threads are gone: commit whatever they sent last, then file its posts, wait for the
  // sync, then close.
  stopping = true;
  if (filingTimer) clearTimeout(filingTimer);
  flush();
  if (hasUnfiledPosts(db)) {
    fileAuthorPosts();
    flush();
  }
  void wal.drained().then(() => {
    wal.close();
    for (const port of data.ports) port.close();
    try {
      db.close();
    } catch (err) {
      log.error('closing the writer database failed', errorFields(err));
    }
    log.debug('writer stopped', { commits: group.stats.commits, writes: group.stats.writes, syncs: wal.syncs });
    control.postMessage({ type: 'stopped' } satisfies FromWriter);
    control.close();
  });
});

control.postMessage({ type: 'ready' } satisfies FromWriter);
