// Uploaded media: the bytes are files under <data>/media, written and synced before the metadata
// row is committed, so a committed row always has its file. Files are named by the media id.
import type { Statement } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';
import { mkdirSync, openSync, writeSync, fsyncSync, closeSync, renameSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export class MediaFiles {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'media');
    mkdirSync(this.dir, { recursive: true });
  }

  /** Writes the file durably: temporary name, fsync, rename, fsync of the directory. */
  write(id: string, bytes: Buffer): void {
    const final = join(this.dir, id);
    const tmp = `${final}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, final);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }

  read(id: string): Promise<Buffer> {
    return readFile(join(this.dir, id));
  }
}

export interface MediaRow {
  id: string;
  owner_id: string;
  content_type: string;
  size: number;
  created_at: string;
}

/** Media metadata in SQLite: a row per uploaded file, committed after the file is on disk. */
export class MediaStore {
  private readonly ownerStmt: Statement;
  private readonly insertStmt: Statement;
  private readonly byIdStmt: Statement;
  private readonly countStmt: Statement;
  private readonly idsStmt: Statement;

  constructor(db: Sqlite) {
    this.ownerStmt = db.prepare('SELECT owner_id FROM media WHERE id = ?').pluck();
    this.insertStmt = db.prepare('INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, ?, ?, ?)');
    this.byIdStmt = db.prepare('SELECT id, owner_id, content_type, size, created_at FROM media WHERE id = ?');
    this.countStmt = db.prepare('SELECT COUNT(*) FROM media').pluck();
    this.idsStmt = db.prepare('SELECT id FROM media ORDER BY id').pluck();
  }

  /** Every media id, for backups. */
  ids(): IterableIterator<string> {
    return this.idsStmt.iterate() as IterableIterator<string>;
  }

  count(): number {
    return this.countStmt.get() as number;
  }

  /** Who uploaded a media id, or undefined when there is no such media. */
  owner(id: string): string | undefined {
    return this.ownerStmt.get(id) as string | undefined;
  }

  insert(id: string, ownerId: string, contentType: string, size: number, now: string): void {
    this.insertStmt.run(id, ownerId, contentType, size, now);
  }

  byId(id: string): MediaRow | undefined {
    return this.byIdStmt.get(id) as MediaRow | undefined;
  }
}

/** Where a media file lives, relative to the data directory (MediaFiles writes it there). */
export function mediaFilePath(id: string): string {
  return join('media', id);
}
