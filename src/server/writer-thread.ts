// Entry point of the writer thread: the one place where the server's request path writes SQLite.
// Each HTTP thread has a MessagePort to it (created by the supervisor); the writer gathers what
// all of them sent, commits it as one group (social/group-commit.ts) and answers each thread
// once a sync of the write-ahead log has covered that commit (store/wal-sync.ts). Syncs run
// beside the commits: the next group is committed while the previous one is being synced.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { setLogLevel, log, errorFields } from '../log';
import { openSqlite, walPath } from '../store/sqlite';
import { WalSync } from '../store/wal-sync';
import { HttpError, unavailable } from '../http/errors';
import { writeExecutor, type WriteOpName } from './write-ops';
import { GroupCommit, toWire, type WriteReply, type WriteRequest } from '../social/group-commit';
import type { ToWriter, WriterData, FromWriter } from './messages';

const data = workerData as WriterData;
const control = parentPort!;
setLogLevel(data.logLevel);

const db = openSqlite(data.dataDir);
// This connection's commits only append to the log; WalSync makes them durable before any answer.
db.pragma('synchronous = NORMAL');
const wal = new WalSync(walPath(data.dataDir));
const group = new GroupCommit(db, writeExecutor(db));
// [commits, writes], read by the supervisor for /metrics without a message round trip.
const stats = new Float64Array(data.stats);

let ops: Array<[WriteOpName, unknown]> = [];
let from: Array<[MessagePort, number]> = [];
let scheduled = false;

function receive(port: MessagePort, request: WriteRequest): void {
  for (let i = 0; i < request.length; i += 3) {
    ops.push([request[i + 1] as WriteOpName, request[i + 2]]);
    from.push([port, request[i] as number]);
  }
  if (!scheduled) {
    scheduled = true;
    // After every message already delivered in this turn, from every thread, has been queued.
    setImmediate(flush);
  }
}

function flush(): void {
  scheduled = false;
  if (ops.length === 0) return;
  const batch = ops;
  const senders = from;
  ops = [];
  from = [];
  const out = group.commit(batch);
  stats[0] = group.stats.commits;
  stats[1] = group.stats.writes;
  const replies = new Map<MessagePort, WriteReply>();
  for (let i = 0; i < out.length; i++) {
    const [port, n] = senders[i];
    let reply = replies.get(port);
    if (!reply) replies.set(port, (reply = []));
    const o = out[i];
    if (o.ok) reply.push(n, 1, o.value);
    else {
      if (!(o.error instanceof HttpError)) log.error('write failed', { op: batch[i][0], ...errorFields(o.error) });
      reply.push(n, 0, toWire(o.error));
    }
  }
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

control.on('message', (m: ToWriter) => {
  if (m.type !== 'stop') return;
  // The HTTP threads are gone: commit whatever they sent last, wait for its sync, then close.
  flush();
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
