// perch import <kutt|shlink|yourls|csv> FILE --user H [--dry-run]: links from another shortener's
// export (links/importer.ts). Prints a line per skipped entry with its reason, then
// `imported N, skipped M`; on a large file, progress lines on stderr.
import { readFileSync } from 'node:fs';
import { AccountStore } from '../accounts/store';
import { ImportFileError, parseImport, type ImportFormat } from '../core/link-import';
import { CodePool } from '../links/code-pool';
import { importLinks } from '../links/importer';
import { LinkStore } from '../links/store';
import { latestSchemaVersion, migrateAll } from '../capabilities';
import { currentSchemaVersion } from '../store/migration';
import type { HotStore } from '../store/lmdb';
import type { LeasedIdGenerator } from '../store/node-lease';
import { openSqlite } from '../store/sqlite';
import { printable } from './format';
import { announceDataDir, commandConfig, commandHotStore, commandLease, existingDataDirOf, userNamed, type CommonOptions } from './common';
import { UsageError } from './usage';

interface ImportOptions extends CommonOptions {
  user: string;
  dryRun: boolean;
}

/** Files with more entries than this report their progress. */
const PROGRESS_FROM = 5000;
/** At most one progress line per this many milliseconds. */
const PROGRESS_EVERY_MS = 1000;

export async function importCommand(format: ImportFormat, file: string, opts: ImportOptions): Promise<void> {
  const config = commandConfig(opts);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    // A FILE that cannot be read, or is not an export of the format, is a bad value (exit 2),
    // as restore's DIR that is not a backup is.
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let entries;
  try {
    entries = parseImport(format, text);
  } catch (err) {
    if (err instanceof ImportFileError) throw new UsageError(`${file} is not a ${format} export: ${err.message}`);
    throw err;
  }
  const dir = existingDataDirOf(opts);
  // On stderr, with the progress lines: stdout is the report.
  announceDataDir(dir, { json: true });
  const db = openSqlite(dir);
  let hot: HotStore | null = null;
  let lease: LeasedIdGenerator | null = null;
  try {
    if (opts.dryRun) {
      // A dry run writes nothing: no migration, no node lease, and no hot store, whose open may
      // repair it. It reads a schema that is this perch's only.
      if (currentSchemaVersion(db) < latestSchemaVersion()) {
        throw new UsageError(`the data in ${dir} has an older schema: run perch migrate first (a dry run writes nothing, migrations included)`);
      }
    } else {
      migrateAll(db);
      const opened = commandHotStore(dir);
      // commandLease closes the hot store itself when it fails.
      lease = await commandLease(opened);
      hot = opened;
    }
    const user = userNamed(new AccountStore(db), opts.user);
    if (!user) throw new UsageError(`no user ${opts.user}`);
    let lastProgress = Date.now();
    const leased = lease;
    const report = importLinks({
      format,
      entries,
      ownerId: user.id,
      config,
      store: new LinkStore(db),
      writer: hot && leased ? { pool: new CodePool(hot, config.links.code_length), newId: () => leased.ids.next() } : null,
      progress(done, total, pass) {
        // The import runs without giving the event loop a turn: the lease's timer cannot renew it.
        leased?.renewIfDue();
        if (entries.length <= PROGRESS_FROM) return;
        const now = Date.now();
        if (done < total && now - lastProgress < PROGRESS_EVERY_MS) return;
        lastProgress = now;
        process.stderr.write(`${pass === 'check' ? 'checked' : 'written'} ${done} of ${total} entries\n`);
      },
    });
    for (const s of report.skipped) process.stdout.write(`skipped ${printable(s.where)}: ${printable(s.reason)}\n`);
    if (opts.dryRun) process.stdout.write('dry run: nothing was written; a real run would have done this:\n');
    process.stdout.write(`imported ${report.imported}, skipped ${report.skipped.length}\n`);
  } finally {
    // Everything is closed whatever fails first: a process that ends with the hot store open
    // leaves a reader slot behind (docs/architecture.md).
    try {
      lease?.release();
    } finally {
      try {
        db.close();
      } finally {
        await hot?.close();
      }
    }
  }
}
