// perch restore: a backup into a new data directory. Everything is assembled in a directory
// beside the target and renamed into place at the end, so a failed restore leaves nothing behind
// and a target that is not empty is never touched. The database is checked against the
// manifest (and so are the files it refers to), migrated to this perch's schema, and the hot
// store is rebuilt from it: what it caches fills itself from SQLite, and each capability puts
// back what it cannot do without (capability.ts, rebuildHot).
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, rmdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Config } from '../config';
import { CAPABILITIES, latestSchemaVersion, migrateAll } from '../capabilities';
import type { AppliedMigration } from '../store/migration';
import { openHotStore } from '../store/lmdb';
import { openSqlite, type Sqlite } from '../store/sqlite';
import { makeDirectories, secureDataDir } from '../store/data-dir';
import { RefusedError, referencedFiles } from './backup';
import { brokenLinkProblem, copyDurably, directoryState, fsyncPath, fsyncTree, leftByGoneProcess, sha256File } from './files';
import { DATABASE_FILE, MANIFEST_FILE, manifestSchema, type Manifest } from './manifest';
import { quickCheck, tableRowCounts } from './store';

/** The source is not a perch backup (no manifest, or one perch cannot read). */
export class NotABackupError extends Error {}

export interface Restored {
  manifest: Manifest;
  applied: AppliedMigration[];
}

export function readManifest(source: string): Manifest {
  const path = join(source, MANIFEST_FILE);
  if (!existsSync(path)) throw new NotABackupError(`${source} is not a perch backup (no ${MANIFEST_FILE})`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new NotABackupError(`${path} is not JSON`);
  }
  const r = manifestSchema.safeParse(parsed);
  if (!r.success) throw new NotABackupError(`${path} is not a manifest this perch reads: ${r.error.issues[0].path.join('.') || '(root)'}: ${r.error.issues[0].message}`);
  return r.data;
}

/** At most this many paths are named in a message about files. */
const NAMED_FILES = 3;

function named(paths: string[]): string {
  return paths.slice(0, NAMED_FILES).join(', ') + (paths.length > NAMED_FILES ? ', …' : '');
}

/**
 * Copies into the staging directory the files the database refers to (media), and only those: a
 * file someone put in the backup directory is not data perch wrote, and does not go into the data
 * directory. They must all be there (less those the backup already found missing), as many and as
 * large as the manifest says, and each with the SHA-256 it had when the backup wrote it (backups
 * made before hashes were kept: count and size only): a backup whose files were lost, cut short or
 * changed after it was made would otherwise restore into posts whose pictures are 404s, or are not
 * the pictures that were posted.
 */
async function copyFiles(db: Sqlite, source: string, staging: string, manifest: Manifest): Promise<void> {
  const missingAtBackup = new Set(manifest.files.missing);
  const expected = referencedFiles(db).filter((rel) => !missingAtBackup.has(rel));
  const absent: string[] = [];
  const changed: string[] = [];
  let bytes = 0;
  for (const rel of expected) {
    const to = join(staging, rel);
    try {
      bytes += copyDurably(join(source, rel), to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      absent.push(rel);
      continue;
    }
    const hashes = manifest.files.sha256;
    if (hashes && hashes[rel] !== (await sha256File(to))) changed.push(rel);
  }
  if (absent.length > 0) throw new Error(`the backup lacks ${absent.length} of its ${expected.length} files (${named(absent)})`);
  if (expected.length !== manifest.files.count || bytes !== manifest.files.bytes) {
    throw new Error(`the backup's files are not the ones it wrote: ${expected.length} files of ${bytes} bytes, its manifest says ${manifest.files.count} of ${manifest.files.bytes}`);
  }
  if (changed.length > 0) {
    throw new Error(`the backup's files are not the ones it wrote: ${changed.length} of ${expected.length} differ from their SHA-256 in the manifest (${named(changed)})`);
  }
}

/**
 * Where a restore assembles the data directory, as a folder and the start of a name its pid ends:
 * inside the target when it is an empty directory (whose parent, /var/lib say, may not be writable
 * by perch), else beside it.
 */
function stagingPlace(dataDir: string, inside: boolean): { dir: string; prefix: string } {
  return inside ? { dir: dataDir, prefix: '.restoring-' } : { dir: dirname(dataDir), prefix: `.${basename(dataDir)}.restoring-` };
}

/**
 * Removes what restores that were killed before they finished left behind (their staging
 * directories, named by their pid): inside the target, one would keep it from counting as empty,
 * and every retry would be refused.
 */
function removeAbandonedStaging(dataDir: string): void {
  for (const { dir, prefix } of [stagingPlace(dataDir, true), stagingPlace(dataDir, false)]) {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    for (const entry of entries) if (leftByGoneProcess(entry, prefix)) rmSync(join(dir, entry), { recursive: true, force: true });
  }
}

/**
 * Moves the assembled data directory's entries into the empty target, the database last; refused
 * when anything else came into the target meanwhile (a second restore, a server or command started
 * on it), since the moves would then leave it holding parts of two data directories. On any
 * failure the entries moved go back, so the target is as it was.
 */
function moveInto(staging: string, dataDir: string): void {
  const arrived = readdirSync(dataDir).filter((e) => e !== basename(staging));
  if (arrived.length > 0) throw new RefusedError(`${dataDir} is not empty any more (${arrived.join(', ')} came into it during the restore)`);
  const entries = readdirSync(staging).sort((a, b) => Number(a === DATABASE_FILE) - Number(b === DATABASE_FILE));
  const moved: string[] = [];
  try {
    for (const entry of entries) {
      if (existsSync(join(dataDir, entry))) throw new RefusedError(`${join(dataDir, entry)} came into ${dataDir} during the restore`);
      renameSync(join(staging, entry), join(dataDir, entry));
      moved.push(entry);
    }
  } catch (err) {
    const stranded: string[] = [];
    for (const entry of moved.reverse()) {
      try {
        renameSync(join(dataDir, entry), join(staging, entry));
      } catch {
        stranded.push(entry);
      }
    }
    // Not a refusal then: the directory was changed.
    if (stranded.length > 0) throw new Error(`${(err as Error).message}; and could not move back ${stranded.join(', ')}, left in ${dataDir}`);
    throw err;
  }
}

export async function restoreBackup(source: string, dataDir: string, config: Config): Promise<Restored> {
  const manifest = readManifest(source);
  removeAbandonedStaging(dataDir);
  const broken = brokenLinkProblem(dataDir);
  if (broken) throw new RefusedError(broken);
  const state = directoryState(dataDir);
  if (state === 'not-empty') throw new RefusedError(`${dataDir} is not empty; restore into an empty or absent data directory`);
  if (state === 'not-a-directory') throw new RefusedError(`${dataDir} is not a directory`);
  const database = join(source, DATABASE_FILE);
  if (!existsSync(database)) throw new Error(`the backup has no ${DATABASE_FILE}`);
  if ((await sha256File(database)) !== manifest.database.sha256) throw new Error(`${database} is not the file the backup wrote (its SHA-256 differs from the manifest's)`);
  const latest = latestSchemaVersion();
  if (manifest.schema_version > latest) {
    throw new Error(`the backup is of a newer perch (${manifest.perch_version}, schema version ${manifest.schema_version}; this one knows up to ${latest})`);
  }

  // Assembled in its staging place (stagingPlace) and moved into place at the end.
  const inside = state === 'empty';
  if (!inside) makeDirectories(dirname(dataDir));
  const place = stagingPlace(dataDir, inside);
  const staging = join(place.dir, place.prefix + process.pid);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    copyDurably(database, join(staging, DATABASE_FILE));
    const db = openSqlite(staging);
    let applied: AppliedMigration[];
    try {
      const check = quickCheck(db);
      if (check !== 'ok') throw new Error(`the backup's database fails SQLite's check: ${check}`);
      const counts = tableRowCounts(db);
      for (const [table, n] of Object.entries(manifest.row_counts)) {
        if (counts[table] !== n) throw new Error(`the backup's ${table} has ${counts[table] ?? 0} rows, its manifest says ${n}`);
      }
      await copyFiles(db, source, staging, manifest);
      const deleted = manifest.files.deleted ?? [];
      if (deleted.length > 0) {
        db.transaction(() => {
          for (const c of CAPABILITIES) c.forgetBackupFiles?.(db, deleted);
        })();
      }
      applied = migrateAll(db);
      const hot = openHotStore(staging);
      try {
        for (const c of CAPABILITIES) c.rebuildHot?.(db, hot);
      } finally {
        await hot.close();
      }
      // Everything in the database file itself, so that the directory moves as it is.
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    fsyncTree(staging);
    if (inside) {
      moveInto(staging, dataDir);
      rmdirSync(staging);
      secureDataDir(dataDir);
      fsyncPath(dataDir);
    } else {
      renameSync(staging, dataDir);
      fsyncPath(dirname(dataDir));
    }
    return { manifest, applied };
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}
