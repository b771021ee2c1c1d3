// Every capability of perch, in one list: adding one is a folder (capability.ts says what it may
// hold) and a line here. Everything else takes what it needs from this list: migrations, the
// writer's operations, pool tasks, outbox consumers, background jobs, gauges, routes and status.
import type { Capability } from './capability';
import { accounts } from './accounts/module';
import { links } from './links/module';
import { media } from './media/module';
import { notifications } from './notifications/module';
import { social } from './social/module';
import { web } from './web/module';
import { search } from './search/module';
import { outboxCapability } from './outbox/module';
import { migrate, migrationList, type AppliedMigration, type Migration } from './store/migration';
import type { Sqlite } from './store/sqlite';
import { SYSTEM_MIGRATIONS } from './store/system-migrations';
import type { TaskTable } from './workers/context';
import type { WriterSetup } from './writer/writer';
import type { SignalLayout } from './server/signals';

/** The capabilities, in the order their routes are registered. */
const MODULES: readonly Capability[] = [accounts, media, social, links, notifications, search, web];

/** The outbox serves the others, so it is made from them. */
export const CAPABILITIES: readonly Capability[] = [outboxCapability(MODULES), ...MODULES];

/** Every migration, in version order. */
export function allMigrations(): Migration[] {
  return migrationList(SYSTEM_MIGRATIONS, ...CAPABILITIES.map((c) => c.migrations ?? []));
}

/** The schema version this perch migrates a database to. */
export function latestSchemaVersion(): number {
  return allMigrations().reduce((v, m) => Math.max(v, m.version), 0);
}

/** Every pool task by name; two of one name are a programming error. */
export function allTasks(): TaskTable {
  const tasks: TaskTable = {};
  for (const c of CAPABILITIES) {
    for (const [name, handler] of Object.entries(c.tasks ?? {})) {
      if (name in tasks) throw new Error(`two pool tasks are named ${name}`);
      tasks[name] = handler;
    }
  }
  return tasks;
}

/** What the writer runs: every capability's operations, jobs and signals. */
export function writerSetup(): WriterSetup {
  return {
    writes: CAPABILITIES.flatMap((c) => (c.writes ? [c.writes] : [])),
    jobs: CAPABILITIES.flatMap((c) => (c.writerJobs ? [c.writerJobs] : [])),
    signals: CAPABILITIES.flatMap((c) => (c.writerSignals ? [c.writerSignals] : [])),
  };
}

/** Every signal and bank of counters (server/signals.ts), in a fixed order every thread agrees on. */
export function signalLayout(): SignalLayout {
  return CAPABILITIES.flatMap((c) => [
    ...(c.signals ?? []).map((name) => [name, 1] as const),
    ...Object.entries(c.counterBanks ?? {}),
  ]);
}

/** Applies every pending migration of every capability; returns what it applied. */
export function migrateAll(db: Sqlite): AppliedMigration[] {
  return migrate(db, allMigrations());
}
