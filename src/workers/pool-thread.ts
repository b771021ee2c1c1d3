// The piscina task entry point: one pool for the whole app, one file, tasks dispatched by name
// from every capability's table (capabilities.ts). Each pool thread opens its own store handles
// once (from workerData) and keeps them.
import { workerData } from 'node:worker_threads';
import type { Config } from '../config';
import { openSqlite } from '../store/sqlite';
import { openHotStore, tolerateHotStoreCommitFailures } from '../store/lmdb';
import { setLogLevel } from '../log';
import { ThreadPubSub } from '../pubsub/port';
import { allTasks } from '../capabilities';
import type { TaskContext, TaskHandler, TaskRequest } from './context';
import { ThreadMemoryTable } from '../server/thread-memory';

/** Every capability's tasks, and a round trip through the pool for checks of the pool itself. */
const TASKS: Record<string, TaskHandler> = { ping: () => 'pong', ...allTasks() };

tolerateHotStoreCommitFailures();

// A pool thread's heap changes only while it runs a task: it writes its figures after each.
const memory = new ThreadMemoryTable((workerData as { memory: SharedArrayBuffer }).memory);
memory.claim('pool');

let ctx: TaskContext | undefined;

function context(): TaskContext {
  if (!ctx) {
    const { config, dataDir } = workerData as { config: Config; dataDir: string };
    setLogLevel(config.log.level);
    // A pool thread only publishes: it waits for no acknowledgement, so it counts no peers.
    ctx = { config, dataDir, sqlite: openSqlite(dataDir), hot: openHotStore(dataDir), pubsub: new ThreadPubSub(0) };
  }
  return ctx;
}

// Opened as the thread starts (the pool keeps its threads up), not in the first task: a post's
// first fan-out should not wait for a thread to open its stores. A failure here surfaces again,
// with its message, in the first task that needs them.
try {
  context();
} catch {
  // (see above)
}

export default async function runTask(request: TaskRequest): Promise<unknown> {
  const handler = TASKS[request.task];
  if (!handler) throw new Error(`unknown task ${String(request.task)}`);
  const c = context();
  // piscina hands a busy worker its next task without returning to the event loop, so lmdb-js
  // never renews its read snapshot between tasks: without a reset, a task would read LMDB as it
  // was many tasks ago (and a read-modify-write outside a write transaction would undo others).
  c.hot.root.resetReadTxn();
  try {
    return await handler(c, request.payload);
  } finally {
    // Between tasks the thread sleeps in Atomics.wait, where lmdb-js's own reset (a timer) never
    // runs: a snapshot kept open there pins every page freed after it, and LMDB, unable to reuse
    // them, grows the file for as long as the thread sleeps (docs/memory.md).
    c.hot.root.resetReadTxn();
    memory.report();
  }
}
