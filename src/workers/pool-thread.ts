// The piscina task entry point: both pools of the app run this one file, tasks dispatched by name
// from the capabilities' tables, each loaded when first needed (task-tables.ts). Each pool thread
// opens its own store handles once (from workerData) and keeps them.
import { workerData } from 'node:worker_threads';
import type { Config } from '../config';
import { openSqlite } from '../store/sqlite';
import { openHotStore, tolerateHotStoreCommitFailures } from '../store/lmdb';
import { setLogLevel } from '../log';
import { ThreadPubSub } from '../pubsub/port';
import { capabilityOfTask, TASK_TABLES } from './task-tables';
import type { TaskContext, TaskHandler, TaskRequest } from './context';
import { ThreadMemoryTable } from '../server/thread-memory';
import { lowerThreadPriority } from './thread-priority';

/** The tasks loaded so far, and a round trip through the pool for checks of the pool itself. */
const TASKS = new Map<string, TaskHandler>([['ping', () => 'pong']]);

function handlerOf(task: string): TaskHandler | undefined {
  if (!TASKS.has(task)) {
    const capability = capabilityOfTask(task);
    const table = Object.hasOwn(TASK_TABLES, capability) ? TASK_TABLES[capability]() : {};
    for (const [name, handler] of Object.entries(table)) TASKS.set(name, handler);
  }
  return TASKS.get(task);
}

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

// Opened as the thread starts, while piscina is still handing it its first task. A failure here
// surfaces again, with its message, in the first task that needs them.
try {
  context();
} catch {
  // (see above)
}

// A thread of the background pool yields the CPU to the HTTP threads and the prompt pool from
// here on (thread-priority.ts, server/background.ts). Its start (loading the code, opening the
// stores) ran at the process's priority, so a first task after a quiet spell is not kept waiting
// for it on a busy machine.
if ((workerData as { lowPriority?: boolean }).lowPriority) lowerThreadPriority();

export default async function runTask(request: TaskRequest): Promise<unknown> {
  const handler = handlerOf(String(request.task));
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
