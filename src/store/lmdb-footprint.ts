// How much of the disk and of the address space the LMDB environment takes: its map, the pages
// written so far, and the file. Read by /metrics and by `perch status` (docs/memory.md).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { lmdbPath, type HotStore } from './lmdb';

/** The LMDB environment's figures: its map, the pages written so far, the file on disk. */
export interface LmdbFootprint {
  mapSizeBytes: number;
  pageSizeBytes: number;
  /** Pages up to the last one written: the part of the file in use, free pages included. */
  usedPages: number;
  fileBytes: number;
  readers: number;
}

export function lmdbFootprint(hot: HotStore, dataDir: string): LmdbFootprint {
  const s = hot.root.getStats() as { mapSize: number; pageSize: number; lastPageNumber: number; numReaders: number };
  let fileBytes = 0;
  try {
    fileBytes = statSync(join(lmdbPath(dataDir), 'data.mdb')).size;
  } catch {
    // Not created yet.
  }
  return { mapSizeBytes: s.mapSize, pageSizeBytes: s.pageSize, usedPages: s.lastPageNumber + 1, fileBytes, readers: s.numReaders };
}

