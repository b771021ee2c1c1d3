// Background work of the supervisor: periodic jobs (outbox dispatch, queue drains, sweeps) that
// hand their heavy lifting to the app's two piscina pools (prompt and background). A job never
// overlaps itself, and shutdown waits for the running ones and gives each a final run so queues
// are flushed.
import { Piscina } from 'piscina';
import { join } from 'node:path';
import type { Config } from '../config';
import { errorFields, log } from '../log';
import type { Sqlite } from '../store/sqlite';
import type { HotStore } from '../store/lmdb';
import type { RunTask } from '../workers/context';
import type { WriterClient } from '../writer/client';
import type { Signals } from './signals';
import { WORKER_RESOURCE_LIMITS } from './heap-limits';
import { PROMPT_TASKS } from '../workers/prompt-tasks';

export interface BackgroundContext {
  config: Config;
  dataDir: string;
  sqlite: Sqlite;
  hot: HotStore;
  /** Counters raised by the writer once a change is durable (server/signals.ts). */
  signals: Signals;
  newId: () => string;
  /** The supervisor's channel to the writer, for the writes background work makes. */
  writes: WriterClient;
  /** Runs a named task of a capability's table in its piscina pool (prompt or background). */
  runTask: RunTask;
}

export interface BackgroundJob {
  name: string;
  /**
   * How often the job runs. For a job with a wake counter, the least time from the start of one
   * run the counter brings to the start of the next: a steady load runs it about once a period.
   */
  everyMs: number;
  /**
   * How often the job runs when nothing wakes it (default: everyMs). A job whose counter
   * announces all its work ticks rarely: the tick then only catches what the counter cannot
   * announce (another process's writes) and retries a run that failed.
   */
  tickMs?: number;
  /** Also run once more during shutdown, after the HTTP threads stopped (to flush a queue). */
  flushOnStop?: boolean;
  /**
   * A shared counter (slot 0) that also starts the job when it moves, without waiting for its
   * next tick. A tick that comes within `everyMs` of a run's start is skipped, so that while
   * the counter keeps moving the job runs about once a period instead of twice. A move during a
   * run brings another run after it, a period from its start: the running one may have read
   * before the change.
   */
  wakeOn?: Int32Array;
  /**
   * Jobs that name the same lane run one after another, never at once: periodic upkeep that can
   * wait a moment then has at most one task in the background pool at a time, so the work that
   * shares that pool's one thread (search indexing) waits behind one upkeep task, not several.
   */
  lane?: string;
  /**
   * `final` is true for the run during shutdown, which must leave nothing behind. A number
   * returned is work left waiting (a gap between an outbox consumer's tasks): the job runs again
   * that many milliseconds later, whatever wakes it meanwhile.
   */
  run(ctx: BackgroundContext, final: boolean): Promise<number | void> | number | void;
}

/** How long a pool thread stays up with nothing to do. */
export const POOL_IDLE_TIMEOUT_MS = 30_000;

/**
 * The app's two piscina pools, of the same thread code. The prompt pool runs the tasks someone
 * waits for within a fraction of a second (workers/prompt-tasks.ts, PROMPT_TASKS: the fan-out,
 * notification deliveries, the short-code pool's refill) at the process's priority. The
 * background pool runs every other task (search indexing, click drains, sweeps, counting) on one
 * thread at a lower CPU priority (workers/thread-priority.ts): on a contended machine it yields to
 * the request path and to the prompt pool, and catches up when the load eases (docs/architecture.md).
 */
export interface TaskPools {
  prompt: Piscina;
  background: Piscina;
}

function createTaskPool(config: Config, dataDir: string, memory: SharedArrayBuffer, maxThreads: number, lowPriority: boolean): Piscina {
  return new Piscina({
    filename: join(__dirname, '..', 'workers', 'pool-thread.js'),
    workerData: { config, dataDir, memory, lowPriority },
    // Threads start when there is work and end after a quiet spell, so that at rest no pool heap
    // stays resident (docs/memory.md). The price is a thread's start (loading the code, opening
    // the stores) on the first task after the quiet spell: a post's fan-out then reaches followers
    // that much later; while people are active the thread stays up.
    minThreads: 0,
    maxThreads,
    idleTimeout: POOL_IDLE_TIMEOUT_MS,
    resourceLimits: WORKER_RESOURCE_LIMITS,
    maxQueue: 1000,
  });
}

export function createPools(config: Config, dataDir: string, memory: SharedArrayBuffer): TaskPools {
  return {
    // Two at most: the machine this is built for has two cores, and the second starts only when
    // two prompt tasks are due at once.
    prompt: createTaskPool(config, dataDir, memory, 2, false),
    // One: background work never needs a second core, and at its priority it would rarely get one.
    background: createTaskPool(config, dataDir, memory, 1, true),
  };
}

/** A RunTask that runs each task in its pool (the table only types the call). */
export function taskRunner(pools: TaskPools): RunTask {
  return ((_table: unknown, task: string, payload?: unknown) =>
    (PROMPT_TASKS.has(task) ? pools.prompt : pools.background).run({ task, payload })) as RunTask;
}

export interface RunningBackground {
  stop(): Promise<void>;
}

/**
 * Whether a job's tick at `now` runs it, its last run having started at `lastStart` (undefined:
 * never): always, unless the job has a wake counter and a run started within its period.
 */
export function tickRuns(job: Pick<BackgroundJob, 'everyMs' | 'wakeOn'>, now: number, lastStart: number | undefined): boolean {
  return !job.wakeOn || lastStart === undefined || now - lastStart >= job.everyMs;
}

/** A waiting run on wake also gives up after this long, and checks whether it should stop. */
const WAKE_WAIT_MS = 1000;

/** Atomics.waitAsync (ES2024, in Node since 16), which this TypeScript target does not declare. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync.bind(Atomics);

export function startBackground(jobs: BackgroundJob[], ctx: BackgroundContext): RunningBackground {
  let stopping = false;
  const running = new Map<string, Promise<void>>();
  /** The last run queued in each lane: the next one starts after it. */
  const lanes = new Map<string, Promise<void>>();
  const timers: NodeJS.Timeout[] = [];

  /** When each job's last run started (performance.now()). */
  const started = new Map<string, number>();

  /** Runs that were asked for while their job was running (a wake-up, a retry): due after it. */
  const again = new Set<string>();
  /** Each job's retry (run asked for a later run), at most one. */
  const retries = new Map<string, NodeJS.Timeout>();

  /** Milliseconds until a period has passed since the job's last run started (0 or less: it has). */
  const periodLeft = (job: BackgroundJob): number => job.everyMs - (performance.now() - (started.get(job.name) ?? -Infinity));

  const retryIn = (job: BackgroundJob, ms: number): void => {
    clearTimeout(retries.get(job.name));
    const timer = setTimeout(() => {
      retries.delete(job.name);
      if (!stopping) void runOnce(job, false, true);
    }, ms);
    retries.set(job.name, timer);
  };

  /** Runs the job unless it is running; `rerun`: then once more after the running one. */
  const runOnce = (job: BackgroundJob, final = false, rerun = false): Promise<void> => {
    const current = running.get(job.name);
    if (current) {
      if (rerun && !final) again.add(job.name);
      return current;
    }
    started.set(job.name, performance.now());
    const before = job.lane ? lanes.get(job.lane) : undefined;
    const p = (async () => {
      try {
        if (before) await before;
        const later = await job.run(ctx, final);
        if (typeof later === 'number' && !final && !stopping) retryIn(job, later);
      } catch (err) {
        log.error('background job failed', { job: job.name, ...errorFields(err) });
      } finally {
        running.delete(job.name);
        // At the job's pace: a period from this run's start, as the wake-ups keep it.
        if (again.delete(job.name) && !stopping) retryIn(job, Math.max(0, periodLeft(job)));
      }
    })();
    running.set(job.name, p);
    if (job.lane) {
      lanes.set(job.lane, p);
      void p.then(() => {
        if (lanes.get(job.lane!) === p) lanes.delete(job.lane!);
      });
    }
    return p;
  };

  for (const job of jobs) {
    const timer = setInterval(() => {
      if (stopping) return;
      if (tickRuns(job, performance.now(), started.get(job.name))) void runOnce(job);
    }, job.tickMs ?? job.everyMs);
    timers.push(timer);
    if (job.wakeOn) void runOnWake(job, job.wakeOn);
  }

  async function runOnWake(job: BackgroundJob, counter: Int32Array): Promise<void> {
    let seen = Atomics.load(counter, 0);
    while (!stopping) {
      const wait = waitAsync(counter, 0, seen, WAKE_WAIT_MS);
      if (wait.async) await wait.value;
      const now = Atomics.load(counter, 0);
      if (stopping || now === seen) continue;
      seen = now;
      await runOnce(job, false, true);
      // At most one run per period, counted from the last run's start: while the counter keeps
      // moving the job runs about once a period (or back to back, when a run takes longer). The
      // pause must not keep a stopping process alive.
      const pause = periodLeft(job);
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause).unref());
    }
  }

  return {
    async stop() {
      stopping = true;
      for (const job of jobs) if (job.wakeOn) Atomics.notify(job.wakeOn, 0);
      for (const t of timers) clearInterval(t);
      for (const t of retries.values()) clearTimeout(t);
      await Promise.all(running.values());
      for (const job of jobs) if (job.flushOnStop) await runOnce(job, true);
    },
  };
}
