// File-system steps of backup and restore: durable copies, hashes, and what a directory holds.
import { closeSync, copyFileSync, createReadStream, fsyncSync, lstatSync, openSync, readdirSync, readlinkSync, statSync, type Dirent } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, sep } from 'node:path';
import { makeDirectories } from '../store/data-dir';
import { processAlive } from '../store/node-lease';

/**
 * What is wrong with a path that is a symbolic link to nothing, or undefined: it looks absent, but
 * a directory cannot be made or moved into its place (the link is in the way), so a backup or
 * restore into it would fail at its very end with the system's bare ENOTDIR or EEXIST.
 */
export function brokenLinkProblem(path: string): string | undefined {
  let link;
  try {
    link = lstatSync(path);
  } catch {
    return undefined;
  }
  if (!link.isSymbolicLink()) return undefined;
  try {
    statSync(path);
    return undefined;
  } catch {
    return `${path} is a symbolic link to ${readlinkSync(path)}, which does not exist; make that directory first, or give the real path`;
  }
}

/** What is at `path`: nothing, an empty directory, a directory with entries, or something else. */
export function directoryState(path: string): 'absent' | 'empty' | 'not-empty' | 'not-a-directory' {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
  if (!st.isDirectory()) return 'not-a-directory';
  return readdirSync(path).length === 0 ? 'empty' : 'not-empty';
}

export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Copies a file and syncs the copy; the directories up to `root` are made as needed. */
export function copyDurably(from: string, to: string): number {
  makeDirectories(dirname(to));
  copyFileSync(from, to);
  fsyncPath(to);
  return statSync(to).size;
}

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/** Every entry under `dir`, at any depth. */
function entriesUnder(dir: string): Dirent[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[];
}

/** An entry's full path (Node.js 20 names its folder `path`, later versions `parentPath`). */
function pathOf(e: Dirent): string {
  return join((e as unknown as { parentPath?: string; path: string }).parentPath ?? e.path, e.name);
}

/**
 * Syncs every directory under `root`, deepest first, then `root`: a synced file whose directory
 * entry is not synced can be gone after a power cut, and so can a directory made for it.
 */
export function fsyncTree(root: string): void {
  const dirs = entriesUnder(root)
    .filter((e) => e.isDirectory())
    .map(pathOf)
    .sort((a, b) => b.split(sep).length - a.split(sep).length);
  for (const dir of dirs) fsyncPath(dir);
  fsyncPath(root);
}

/**
 * Whether `entry` is `prefix` followed by the pid of a process that left it behind: one that is
 * gone, or this process's own pid, reused (a container's first process, say), since this process
 * has made none yet when it looks. What a killed backup or restore leaves is named so.
 */
export function leftByGoneProcess(entry: string, prefix: string): boolean {
  const pid = entry.startsWith(prefix) ? entry.slice(prefix.length) : '';
  return /^[0-9]+$/.test(pid) && (Number(pid) === process.pid || !processAlive(Number(pid)));
}
