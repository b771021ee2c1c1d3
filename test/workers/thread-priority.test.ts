// A background pool thread lowers its own CPU priority (workers/thread-priority.ts); the thread
// that asks is the only one that changes, and in a running server only the background pool's
// thread runs lowered.
import t from 'tap';
import { readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_NICE_INCREMENT, currentThreadId, lowerThreadPriority } from '../../src/workers/thread-priority';
import { heapsByKind } from '../../src/server/thread-memory';
import { startServer } from '../helpers/server';
import { createPost, eventually } from '../social/helpers';

const linux = process.platform === 'linux';
const MODULE = join(__dirname, '..', '..', 'src', 'workers', 'thread-priority.js');

/** Runs lowerThreadPriority(increment) in a new thread; answers its thread id and the new value, read while it still runs. */
function lowerInWorker(increment?: number): Promise<{ tid: number; answered: number | undefined; seen: number }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const m = require(workerData.module);
    const answered = m.lowerThreadPriority(workerData.increment);
    parentPort.postMessage({ tid: m.currentThreadId(), answered });
    parentPort.once('message', () => process.exit(0));`;
  const worker = new Worker(code, { eval: true, workerData: { module: MODULE, increment } });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: { tid: number; answered: number | undefined }) => {
      const seen = getPriority(m.tid);
      worker.postMessage('done');
      resolve({ ...m, seen });
    });
  });
}

t.test('a thread lowers its own priority, and no other thread changes', { skip: !linux && 'Linux only' }, async (t) => {
  const mine = getPriority();
  const tid = currentThreadId()!;
  t.equal(tid, process.pid, 'the main thread id is the process id');
  const lowered = await lowerInWorker();
  t.not(lowered.tid, process.pid, 'the worker has its own thread id');
  t.equal(lowered.answered, Math.min(19, mine + BACKGROUND_NICE_INCREMENT), 'raised by the increment');
  t.equal(lowered.seen, lowered.answered, 'the kernel reports the new value for that thread');
  t.equal(getPriority(), mine, 'the main thread keeps its priority');
  t.equal(getPriority(tid), mine);
});

t.test('the nice value stops at 19', { skip: !linux && 'Linux only' }, async (t) => {
  const lowered = await lowerInWorker(100);
  t.equal(lowered.answered, 19);
  t.equal(lowered.seen, 19);
});

t.test('elsewhere than Linux nothing changes', { skip: linux && 'runs on other systems' }, async (t) => {
  t.equal(lowerThreadPriority(), undefined);
});

/** The nice value of each thread of process `pid`, from /proc. */
function niceValues(pid: number): number[] {
  const values: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      values.push(getPriority(Number(tid)));
    } catch {
      // The thread ended since the listing.
    }
  }
  return values;
}

t.test('a running server: its background pool thread runs lowered, every other thread as started', { skip: !linux && 'Linux only' }, async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const pid = server.proc.pid!;
  const base = getPriority(pid);
  const author = await server.keygen('author');
  const reader = await server.keygen('reader');
  t.equal((await server.post(`/api/users/${author.user_id}/follow`, { key: reader.key })).status, 200);
  const post = await createPost(server, author.key, 'through both pools');
  // The fan-out is a prompt task, the indexing a background one: once the follower sees the post
  // and a search finds it, a thread of each pool has run (and stays up for a quiet spell).
  await eventually('the fan-out reaches the follower', 10_000, async () => {
    const r = await server.get('/api/timeline', { key: reader.key });
    return r.json.items.some((p: { id: string }) => p.id === post.id) ? true : undefined;
  });
  await eventually('the post is searchable', 10_000, async () => {
    const r = await server.get('/api/search?q=pools', { key: reader.key });
    return r.status === 200 && r.json.items.some((p: { id: string }) => p.id === post.id) ? true : undefined;
  });
  const { value } = await eventually('the pool threads are counted', 10_000, async () => {
    const pool = heapsByKind(await (await fetch(server.url + '/metrics')).text()).pool?.threads ?? 0;
    const nice = niceValues(pid);
    // A pool thread may start or end between the two reads: ask again until they agree.
    return pool >= 2 && nice.filter((n) => n !== base).length === 1 ? { pool, nice } : undefined;
  });
  t.equal(value.nice.filter((n) => n === base + BACKGROUND_NICE_INCREMENT).length, 1, 'one thread lowered: the background pool has one');
  t.equal(value.nice.filter((n) => n === base).length, value.nice.length - 1, `every other thread, ${value.pool - 1} prompt pool thread(s) among them, at the process value`);
  t.equal(getPriority(pid), base, 'the main thread keeps its priority');
});
