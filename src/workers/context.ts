// What a pool task is: a function of a context (this pool thread's stores) and a plain-data
// payload, registered by name in a capability's task table. Tables are typed, so the supervisor
// names a task and passes its payload with the compiler checking both (RunTask).
import type { Config } from '../config';
import type { Sqlite } from '../store/sqlite';
import type { HotStore } from '../store/lmdb';
import type { PubSub } from '../pubsub/port';

export interface TaskContext {
  config: Config;
  dataDir: string;
  sqlite: Sqlite;
  hot: HotStore;
  /**
   * Messages to the other threads of the process: a pool thread reaches the HTTP threads. Every
   * pool thread has one; a context made for a test may leave it out.
   */
  pubsub?: PubSub;
  /**
   * Closes handles a task opened and keeps for this context's later tasks. A pool thread's ending
   * closes its own; a context that ends while the process goes on (the work before the server
   * listens, run on the main thread: server/startup-tasks.ts) calls these.
   */
  onEnd?: Array<() => void>;
}

export type TaskHandler<P = any, R = unknown> = (ctx: TaskContext, payload: P) => R | Promise<R>;

export type TaskTable = Record<string, TaskHandler>;

export type PayloadOf<H> = H extends (ctx: TaskContext, payload: infer P) => unknown ? P : never;
export type TaskResultOf<H> = H extends (...args: never[]) => infer R ? Awaited<R> : never;

/** What crosses to a pool thread. */
export interface TaskRequest {
  task: string;
  payload?: unknown;
}

/** Runs `name` of `table` in the pool: the table is only there for the compiler. */
export type RunTask = <T extends TaskTable, K extends keyof T & string>(
  table: T,
  name: K,
  ...payload: undefined extends PayloadOf<T[K]> ? [payload?: PayloadOf<T[K]>] : [payload: PayloadOf<T[K]>]
) => Promise<TaskResultOf<T[K]>>;
