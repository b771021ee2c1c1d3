// Every named write the writer runs, from every capability, bound to that capability's
// store on the writer's connection. HTTP threads and the supervisor name an operation and send
// its plain-data arguments (social/group-commit.ts); nothing else in a running server writes
// the request path's rows.
import type { Sqlite } from '../store/sqlite';
import { SocialStore } from '../social/store';
import { LinkStore } from '../links/store';
import { BULK_WRITE_OPS, WRITE_OPS as SOCIAL_WRITE_OPS, type WriteArgs as SocialWriteArgs, type WriteResults as SocialWriteResults } from '../social/writes';
import { LINK_WRITE_OPS, type LinkWriteArgs, type LinkWriteResults } from '../links/writes';

export type WriteArgs = SocialWriteArgs & LinkWriteArgs;
export type WriteResults = SocialWriteResults & LinkWriteResults;
export type WriteOpName = keyof WriteArgs;

export interface WriteExecutor {
  (name: WriteOpName, args: unknown): unknown;
  /** Whether `args` may run in a bulk call of `name` (social/writes.ts, BULK_WRITE_OPS). */
  bulkable(name: WriteOpName, args: unknown): boolean;
  /** Runs consecutive calls of `name`, each bulkable, together; their results in order. */
  bulk(name: WriteOpName, args: unknown[]): unknown[];
}

export function writeExecutor(db: Sqlite): WriteExecutor {
  const social = new SocialStore(db);
  const links = new LinkStore(db);
  const ops = new Map<string, (args: unknown) => unknown>();
  for (const [name, op] of Object.entries(SOCIAL_WRITE_OPS)) ops.set(name, (args) => (op as (s: SocialStore, a: unknown) => unknown)(social, args));
  for (const [name, op] of Object.entries(LINK_WRITE_OPS)) ops.set(name, (args) => (op as (s: LinkStore, a: unknown) => unknown)(links, args));
  const exec = (name: WriteOpName, args: unknown): unknown => {
    const op = ops.get(name);
    if (!op) throw new Error(`unknown write operation ${String(name)}`);
    return op(args);
  };
  const bulkOps = BULK_WRITE_OPS as Partial<Record<WriteOpName, { accepts(a: unknown): boolean; run(s: SocialStore, a: unknown[]): unknown[] }>>;
  return Object.assign(exec, {
    bulkable: (name: WriteOpName, args: unknown) => bulkOps[name]?.accepts(args) ?? false,
    bulk: (name: WriteOpName, args: unknown[]) => bulkOps[name]!.run(social, args),
  });
}
