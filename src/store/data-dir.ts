// The data directory's files and their permissions. It holds key hashes, the cursor secret and
// everything users wrote, so perch keeps it to its own user: the CLI runs with umask 077 (new
// files 0600, new directories 0700), and existing installations are tightened when a command
// opens them: the directory, the SQLite files, LMDB and the media directory.
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { lmdbPath } from './lmdb';
import { sqlitePath } from './sqlite';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './file-modes';

/** What a command that opens the data directory keeps private, with the mode each gets. */
function privatePaths(dataDir: string): Array<[string, number]> {
  const db = sqlitePath(dataDir);
  const lmdb = lmdbPath(dataDir);
  return [
    [dataDir, PRIVATE_DIR_MODE],
    [db, PRIVATE_FILE_MODE],
    [db + '-wal', PRIVATE_FILE_MODE],
    [db + '-shm', PRIVATE_FILE_MODE],
    [lmdb, PRIVATE_DIR_MODE],
    [join(lmdb, 'data.mdb'), PRIVATE_FILE_MODE],
    [join(lmdb, 'lock.mdb'), PRIVATE_FILE_MODE],
    [join(dataDir, 'media'), PRIVATE_DIR_MODE],
  ];
}

/**
 * Takes group and other permissions off the data directory and the files above (those that
 * exist and are this user's; others are left as they are). Media files made before this are left
 * as they were: the directories around them already keep everyone else out.
 */
export function secureDataDir(dataDir: string): void {
  const uid = process.getuid?.();
  for (const [path, mode] of privatePaths(dataDir)) {
    if (!existsSync(path)) continue;
    const st = statSync(path);
    if ((st.mode & 0o077) === 0 || (uid !== undefined && st.uid !== uid)) continue;
    chmodSync(path, mode);
  }
}

/** Files directly in `dir` and their total size (0 and 0 when it does not exist). */
export function directoryUsage(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { files, bytes };
  }
  for (const name of names) {
    try {
      const st = statSync(join(dir, name));
      if (!st.isFile()) continue;
      files++;
      bytes += st.size;
    } catch {
      // Removed meanwhile (a temporary file of an upload): not counted.
    }
  }
  return { files, bytes };
}

/** The size of a file, 0 when it does not exist. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** A reason not to start, told to the operator as one line. */
export class StartupError extends Error {}

/**
 * Makes a directory and its missing parents one level at a time. Node's recursive mkdir is not
 * used: under /proc (mkdir answers ENOENT although the parent exists) it retries forever.
 */
export function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      // Made meanwhile by another process starting on the same directory: fine.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

export function ensureDataDir(dataDir: string): string {
  const dir = resolve(dataDir);
  try {
    makeDirectories(dir);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(dir, constants.R_OK | constants.W_OK);
    const probe = join(dir, `.write-probe-${process.pid}`);
    writeFileSync(probe, 'ok');
    unlinkSync(probe);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new StartupError(`data directory ${dir} is not usable: ${e.code ?? e.message}`);
  }
  return dir;
}
