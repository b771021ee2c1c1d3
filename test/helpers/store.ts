// Stores for tests that run below the HTTP server: a SQLite file in a temporary data directory
// of its own, closed and removed after the test, and users to own what the test writes.
import { rmSync } from 'node:fs';
import { openSqlite, type Sqlite } from '../../src/store/sqlite';
import { migrateAll, writerSetup } from '../../src/capabilities';
import { GroupCommit } from '../../src/writer/group-commit';
import { writeExecutor } from '../../src/writer/operations';
import { WriterClient } from '../../src/writer/client';
import { tempDataDir } from './server';

export type Teardown = { teardown(fn: () => unknown): void };

/** A SQLite store in a fresh data directory, migrated unless `migrated` is false. */
export function tempStore(t: Teardown, prefix: string, opts: { migrated?: boolean } = {}): { dir: string; db: Sqlite } {
  const dir = tempDataDir(prefix);
  const db = openSqlite(dir);
  if (opts.migrated ?? true) migrateAll(db);
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, db };
}

/** Adds users by id and handle, written straight into SQLite. */
export function addUsers(db: Sqlite, handles: Record<string, string>, createdAt = '2026-01-01T00:00:00.000Z'): void {
  const insert = db.prepare('INSERT INTO users (id, handle, handle_lower, created_at) VALUES (?, ?, ?, ?)');
  for (const [id, handle] of Object.entries(handles)) insert.run(id, handle, handle.toLowerCase(), createdAt);
}

/** The writer's group commit on `db`, with every capability's operations. */
export function groupCommit(db: Sqlite): GroupCommit {
  return new GroupCommit(db, writeExecutor(db, writerSetup().writes));
}

/** Commits operations as one group on `db`; throws the first failure, else returns the results. */
export function commitAll(group: GroupCommit, ops: Array<[string, unknown]>): unknown[] {
  const out = group.commit(ops);
  for (const o of out) if (!o.ok) throw o.error;
  return out.map((o) => (o as { value: unknown }).value);
}

/**
 * A writer client (as the supervisor's background jobs hold) whose requests commit as one group
 * on the test's own connection, answered on the next turn as the writer thread's would be.
 */
export function groupWriterClient(group: GroupCommit): WriterClient {
  const writes: WriterClient = new WriterClient({
    send: (request) => {
      const out = group.commit(Array.from({ length: request.length / 3 }, (_, i) => [request[i * 3 + 1] as string, request[i * 3 + 2]]));
      const reply: unknown[] = [];
      out.forEach((o, i) => reply.push(request[i * 3], o.ok ? 1 : 0, o.ok ? o.value : { http: false, message: String(o.error), name: 'Error' }));
      setImmediate(() => writes.receive(reply));
    },
    close: () => {},
  });
  return writes;
}

/** The steps of SQLite's plan for `sql` (EXPLAIN QUERY PLAN), e.g. `SEARCH t USING ...` or `SCAN t`. */
export function queryPlan(db: Sqlite, sql: string): string[] {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail);
}
