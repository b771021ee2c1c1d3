// The data directory's files and their permissions. It holds key hashes, the cursor secret and
// everything users wrote, so perch keeps it to its own user: the CLI runs with umask 077 (new
// files 0600, new directories 0700), and existing installations are tightened when a command
// opens them: the directory, the SQLite files, LMDB and the media directory.
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { lmdbPath } from './lmdb';
import { sqlitePath } from './sqlite';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_UMASK = 0o077;

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
