// Named write operations: what a capability gives the writer. Each capability binds its
// operations to the writer's SQLite connection (a WriteSet) and names them; the writer runs them
// by name inside its group transactions and knows nothing else about them. Arguments and results
// cross threads by structured clone: plain data only (ids as decimal strings, never bigint).
import type { Sqlite } from '../store/sqlite';

/**
 * A run of consecutive calls that can be carried out together, with the same rows and results as
 * one call after another: `accepts` tells which calls qualify.
 */
export interface BulkWrite<A, R> {
  accepts(args: A): boolean;
  run(args: A[]): R[];
}

/** An operation: a function of its arguments, optionally with a bulk form. */
export type WriteOperation<A = any, R = any> = ((args: A) => R) | { run(args: A): R; bulk: BulkWrite<A, R> };

export type WriteTable = Record<string, WriteOperation>;

/** A capability's operations, bound to the writer's connection when the writer starts. */
export type WriteSet<T extends WriteTable = WriteTable> = (db: Sqlite) => T;

export type ArgsOf<O> = O extends (args: infer A) => unknown ? A : O extends { run(args: infer A): unknown } ? A : never;
export type ResultOf<O> = O extends (args: never) => infer R ? R : O extends { run(args: never): infer R } ? R : never;

/** A typed view of a writer client: the operations of one table, by name. */
export interface Writes<T extends WriteTable> {
  run<K extends keyof T & string>(op: K, args: ArgsOf<T[K]>): Promise<ResultOf<T[K]>>;
}

/** What the group commit calls: every registered operation, by name. */
export interface WriteExecutor {
  (name: string, args: unknown): unknown;
  /** Whether `args` may run in a bulk call of `name`. */
  bulkable(name: string, args: unknown): boolean;
  /** Runs consecutive calls of `name`, each bulkable, together; their results in order. */
  bulk(name: string, args: unknown[]): unknown[];
}

/** Binds every set to `db` and joins them; two operations of one name are a programming error. */
export function writeExecutor(db: Sqlite, sets: readonly WriteSet[]): WriteExecutor {
  const ops = new Map<string, (args: unknown) => unknown>();
  const bulks = new Map<string, BulkWrite<unknown, unknown>>();
  for (const set of sets) {
    for (const [name, op] of Object.entries(set(db))) {
      if (ops.has(name)) throw new Error(`two write operations are named ${name}`);
      if (typeof op === 'function') ops.set(name, op);
      else {
        ops.set(name, (args) => op.run(args));
        bulks.set(name, op.bulk);
      }
    }
  }
  const exec = (name: string, args: unknown): unknown => {
    const op = ops.get(name);
    if (!op) throw new Error(`unknown write operation ${name}`);
    return op(args);
  };
  return Object.assign(exec, {
    bulkable: (name: string, args: unknown) => bulks.get(name)?.accepts(args) ?? false,
    bulk: (name: string, args: unknown[]) => bulks.get(name)!.run(args),
  });
}
