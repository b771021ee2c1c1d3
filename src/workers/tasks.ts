// The piscina task entry point: one pool for the whole app, one file, tasks dispatched by name.
// Each pool thread opens its own store handles once (from workerData) and keeps them.
import { workerData } from 'node:worker_threads';
import type { Config } from '../config';
import { openSqlite, type Sqlite } from '../store/sqlite';
import { openHotStore, type HotStore } from '../store/lmdb';
import { setLogLevel } from '../log';
import { TASKS } from './registry';

export interface TaskRequest {
  task: keyof typeof TASKS;
  payload?: unknown;
}

export interface TaskContext {
  config: Config;
  dataDir: string;
  sqlite: Sqlite;
  hot: HotStore;
}

let ctx: TaskContext | undefined;

function context(): TaskContext {
  if (!ctx) {
    const { config, dataDir } = workerData as { config: Config; dataDir: string };
    setLogLevel(config.log.level);
    ctx = { config, dataDir, sqlite: openSqlite(dataDir), hot: openHotStore(dataDir) };
  }
  return ctx;
}

export default async function runTask(request: TaskRequest): Promise<unknown> {
  const handler = TASKS[request.task];
  if (!handler) throw new Error(`unknown task ${String(request.task)}`);
  return handler(context(), request.payload as never);
}
