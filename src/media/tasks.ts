// Pool tasks of the media capability (MEDIA_TASKS, registered by module.ts): the reads of the
// upkeep (upkeep.ts) that may take a while on a large store, off the supervisor's thread.
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskContext } from '../workers/context';
import { MediaFiles, MediaStore } from './store';
import { ORPHAN_MIN_AGE_MS, fileOfName } from './upkeep';

export interface FindUnposted {
  /** Uploads from this time on (ISO 8601; '' for all)... */
  from: string;
  /** ...and before this one. */
  before: string;
  limit: number;
}

/** Unposted files uploaded in [from, before), at most `limit`; `complete` when that was all of them. */
export function findUnposted(ctx: TaskContext, p: FindUnposted): { files: Array<{ id: string; size: number }>; complete: boolean } {
  const files = new MediaStore(ctx.sqlite).unposted(p.from, p.before, p.limit);
  return { files, complete: files.length < p.limit };
}

/**
 * Removes the files of the media directory that no row refers to and that were last written over
 * ORPHAN_MIN_AGE_MS ago (`nowMs`: the caller's clock), and the partial files of uploads as old.
 */
export function sweepOrphanFiles(ctx: TaskContext, p: { nowMs: number }): { removed: number; bytes: number } {
  const store = new MediaStore(ctx.sqlite);
  const files = new MediaFiles(ctx.dataDir);
  let removed = 0;
  let bytes = 0;
  for (const name of files.names()) {
    const file = fileOfName(name);
    if (!file || (!file.partial && store.owner(file.id) !== undefined)) continue;
    const path = join(files.dir, name);
    try {
      const st = statSync(path);
      if (!st.isFile() || p.nowMs - st.mtimeMs < ORPHAN_MIN_AGE_MS) continue;
      rmSync(path, { force: true });
      removed++;
      bytes += st.size;
    } catch (err) {
      // Gone meanwhile (removed by its own upload's failure): nothing left to do.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return { removed, bytes };
}

export const MEDIA_TASKS = {
  'media.findUnposted': findUnposted,
  'media.sweepOrphanFiles': sweepOrphanFiles,
};
