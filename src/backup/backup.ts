// perch backup: a consistent snapshot of a data directory, taken while the server runs.
// SQLite's online backup API copies the database as of one moment (every page in one step, so a
// commit of the running server cannot restart it halfway); the files its rows refer to (media)
// are copied after, and exist, since a row is committed only after its file. The hot store is
// left out (manifest.ts says why). manifest.json is written last: it marks a complete backup;
// until then a marker names the process writing it, so that a retry can clear what a killed one left.
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CAPABILITIES } from '../capabilities';
import { makeDirectories } from '../store/data-dir';
import { currentSchemaVersion } from '../store/migration';
import { openSqlite, sqlitePath, type Sqlite } from '../store/sqlite';
import { VERSION } from '../version';
import { brokenLinkProblem, copyDurably, directoryState, fsyncPath, fsyncTree, leftByGoneProcess, sha256File } from './files';
import { DATABASE_FILE, HOT_STORE_NOTE, MANIFEST_FILE, MANIFEST_FORMAT, type Manifest } from './manifest';
import { quickCheck, tableRowCounts } from './store';

/** A backup or restore that must not go ahead (the target is in use): nothing was touched. */
export class RefusedError extends Error {}

/** The files a database's rows refer to (media), relative to the data directory: what a backup copies. */
export function referencedFiles(db: Sqlite): string[] {
  return CAPABILITIES.flatMap((c) => [...(c.backupFiles?.(db) ?? [])]);
}

/** Pages per step of the online backup: all of them, so the copy is one consistent read. */
const ALL_PAGES = 0x7fffffff;

/** A file naming the process writing a backup into its directory, from the start until its manifest is written. */
const IN_PROGRESS = '.backup-in-progress-';

/**
 * Empties a directory that a backup was writing into when it was killed (Ctrl-C, a crash): it
 * holds the marker of a process that is gone (or of this pid, a killed backup's that had the same
 * one) and no manifest. Every retry into it would otherwise be refused as not empty. A directory
 * without such a marker is left as it is.
 */
function clearAbandonedBackup(target: string): void {
  let entries: string[];
  try {
    entries = readdirSync(target);
  } catch {
    return;
  }
  const markers = entries.filter((e) => e.startsWith(IN_PROGRESS));
  if (entries.includes(MANIFEST_FILE) || markers.length === 0 || !markers.every((m) => leftByGoneProcess(m, IN_PROGRESS))) return;
  for (const entry of entries) rmSync(join(target, entry), { recursive: true, force: true });
}

/**
 * Of the files the snapshot refers to and the backup found gone, those the live database no longer
 * refers to either: deleted after the snapshot was taken (an uploader deleting a file, the media
 * upkeep forgetting one never posted), not lost. Both kinds stay in the manifest's `missing`,
 * which a restore accepts; only the others are damage worth a warning.
 */
function deletedSinceSnapshot(dataDir: string, missing: readonly string[]): string[] {
  if (missing.length === 0) return [];
  const live = openSqlite(dataDir, { readonly: true });
  try {
    const referenced = new Set(referencedFiles(live));
    return missing.filter((rel) => !referenced.has(rel));
  } finally {
    live.close();
  }
}

export interface BackupOptions {
  now?: Date;
  /** Called between the snapshot and the copy of the files (tests: what changes meanwhile). */
  afterSnapshot?: () => void;
}

export async function createBackup(dataDir: string, target: string, opts: BackupOptions = {}): Promise<Manifest> {
  const now = opts.now ?? new Date();
  clearAbandonedBackup(target);
  const broken = brokenLinkProblem(target);
  if (broken) throw new RefusedError(broken);
  const state = directoryState(target);
  if (state === 'not-empty') throw new RefusedError(`${target} is not empty; a backup goes into a new or empty directory`);
  if (state === 'not-a-directory') throw new RefusedError(`${target} is not a directory`);
  // Not Node's recursive mkdir: under /proc it retries forever (store/data-dir.ts).
  makeDirectories(target);
  const marker = join(target, IN_PROGRESS + process.pid);
  try {
    writeFileSync(marker, '');
    const partial = join(target, `${DATABASE_FILE}.partial`);
    const source = openSqlite(dataDir, { readonly: true });
    try {
      await source.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      source.close();
    }

    const copy = new Database(partial);
    let schemaVersion: number;
    let rowCounts: Record<string, number>;
    let files: string[];
    try {
      // One self-contained file: no write-ahead log beside it.
      copy.pragma('journal_mode = DELETE');
      const check = quickCheck(copy);
      if (check !== 'ok') throw new Error(`the snapshot of ${sqlitePath(dataDir)} fails SQLite's check: ${check}`);
      schemaVersion = currentSchemaVersion(copy);
      rowCounts = tableRowCounts(copy);
      files = referencedFiles(copy);
    } finally {
      copy.close();
    }

    opts.afterSnapshot?.();
    let bytes = 0;
    const missing: string[] = [];
    const hashes: Record<string, string> = {};
    for (const rel of files) {
      const to = join(target, rel);
      try {
        bytes += copyDurably(join(dataDir, rel), to);
      } catch (err) {
        // A row whose file is gone is reported, not a reason to have no backup at all.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        missing.push(rel);
        continue;
      }
      // Of the copy, as written: a restore checks every file against it.
      hashes[rel] = await sha256File(to);
    }

    const database = join(target, DATABASE_FILE);
    renameSync(partial, database);
    fsyncPath(database);
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      perch_version: VERSION,
      schema_version: schemaVersion,
      created_at: now.toISOString(),
      source_data_dir: dataDir,
      database: { file: DATABASE_FILE, bytes: statSync(database).size, sha256: await sha256File(database) },
      files: { count: files.length - missing.length, bytes, missing, deleted: deletedSinceSnapshot(dataDir, missing), sha256: hashes },
      row_counts: rowCounts,
      not_included: HOT_STORE_NOTE,
    };
    const manifestPath = join(target, MANIFEST_FILE);
    writeFileSync(`${manifestPath}.partial`, JSON.stringify(manifest, null, 2) + '\n');
    fsyncPath(`${manifestPath}.partial`);
    renameSync(`${manifestPath}.partial`, manifestPath);
    rmSync(marker);
    fsyncTree(target);
    return manifest;
  } catch (err) {
    // Leave the target as it was found: gone if it was absent, empty if it was empty.
    if (state === 'absent') rmSync(target, { recursive: true, force: true });
    else for (const entry of readdirSync(target)) rmSync(join(target, entry), { recursive: true, force: true });
    throw err;
  }
}
