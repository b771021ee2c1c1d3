// The work before the server listens (a first fill of the code pool, a first index of the posts)
// runs on the main thread, which has nothing else to do until then. A pool thread started for it
// would end before the server listens, but the memory its thread allocated (its malloc arena, the
// C heap of its SQLite connections) stays with the process: glibc keeps a thread's arena for the
// threads that come after it, and a server that just started sat about 7 MiB higher at rest than
// the same server started again on the same data directory (docs/memory.md).
import type { Config } from '../config';
import type { HotStore } from '../store/lmdb';
import { openSqlite } from '../store/sqlite';
import type { RunTask, TaskContext, TaskTable } from '../workers/context';

export interface StartupTasks {
  runTask: RunTask;
  /** Closes what the tasks opened; the runner must not be used after. */
  end(): void;
}

/**
 * Runs tasks in this thread, one at a time, each to its end before the next starts, as a pool
 * thread runs its tasks. They get `hot` and a SQLite connection of their own, as in a pool thread,
 * rather than the supervisor's: `end` closes it, with whatever the tasks opened, and with it the
 * page cache a first index of many posts filled.
 */
export function startupTasks(config: Config, dataDir: string, hot: HotStore): StartupTasks {
  const ctx: TaskContext = { config, dataDir, sqlite: openSqlite(dataDir), hot, onEnd: [] };
  let queue: Promise<unknown> = Promise.resolve();
  const run = (table: TaskTable, task: string, payload?: unknown): Promise<unknown> => {
    const handler = Object.hasOwn(table, task) ? table[task] : undefined;
    if (!handler) return Promise.reject(new Error(`unknown task ${task}`));
    // One after another: a task that awaits must not let another write beside it on the same
    // connection. Each starts from a fresh LMDB snapshot, as in a pool thread (workers/pool-thread.ts).
    const result = queue.then(() => {
      hot.root.resetReadTxn();
      return handler(ctx, payload);
    });
    queue = result.catch(() => undefined);
    return result;
  };
  return {
    runTask: run as RunTask,
    end() {
      for (const close of ctx.onEnd ?? []) close();
      ctx.sqlite.close();
    },
  };
}
