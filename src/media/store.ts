// Uploaded media: the bytes are files under <data>/media, written and synced before the metadata
// row is committed, and removed after it is deleted, so a committed row has its file. Files are
// named by the media id.
import type { Statement } from 'better-sqlite3';
import type { Sqlite } from '../store/sqlite';
import { close, fsync, mkdirSync, open, readdirSync, write } from 'node:fs';
import { access, readFile, rename, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join, sep } from 'node:path';
import { errorFields, log } from '../log';

/** The directory of the media files, in the data directory. */
const MEDIA_DIR = 'media';

/**
 * The two calls whose failures matter most, replaceable so tests can make them fail the way a
 * full disk does (a short count, then ENOSPC; or an fsync that reports EDQUOT or EIO).
 */
export interface MediaFileIo {
  write(fd: number, buffer: Buffer, offset: number, length: number): Promise<number>;
  fsync(fd: number): Promise<void>;
}

const writeAsync = promisify(write);
const openAsync = promisify(open);
const closeAsync = promisify(close);

const NODE_FILE_IO: MediaFileIo = {
  write: (fd, buffer, offset, length) => writeAsync(fd, buffer, offset, length).then((r) => r.bytesWritten),
  fsync: promisify(fsync),
};

function ioError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

export class MediaFiles {
  readonly dir: string;
  private readonly io: MediaFileIo;
  /**
   * The upload being written, which the next waits for. Each step runs on libuv's pool, off the
   * thread that serves requests (an fsync of a few MiB can take a tenth of a second on a slow
   * disk, and redirects, reads and the writer's commits would all wait for it); one at a time,
   * so that uploads arriving together cannot fill the pool, whose threads also run the log's
   * syncs. The disk syncs them one after another anyway.
   */
  private last: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string, io: Partial<MediaFileIo> = {}) {
    this.dir = join(dataDir, MEDIA_DIR);
    this.io = { ...NODE_FILE_IO, ...io };
    mkdirSync(this.dir, { recursive: true });
  }

  /**
   * Writes the file durably: temporary name, every byte written, fsync, rename, fsync of the
   * directory. On any failure it rejects and leaves neither the temporary file nor the final one,
   * so the caller answers an error and commits no row.
   */
  write(id: string, bytes: Buffer): Promise<void> {
    const done = this.last.then(() => this.writeNow(id, bytes));
    // The next upload waits for this one to end, however it ends.
    this.last = done.catch(() => {});
    return done;
  }

  /** The names in the media directory: files by media id, and `<id>.tmp` while one is written. */
  names(): string[] {
    return readdirSync(this.dir);
  }

  read(id: string): Promise<Buffer> {
    return readFile(join(this.dir, id));
  }

  /** Resolves if the file is there; rejects as `read` would (ENOENT when it is not). */
  present(id: string): Promise<void> {
    return access(join(this.dir, id));
  }

  /** Removes a file that no row refers to (an upload that answered an error, a deleted file). */
  remove(id: string): Promise<void> {
    return rm(join(this.dir, id), { force: true });
  }

  /**
   * Removes the file of a row just deleted, never failing: a file left by a failed removal has no
   * row, so it is not served, and the upkeep's look for such files removes it (media/upkeep.ts).
   */
  discard(id: string): Promise<void> {
    return this.remove(id).catch((err) => log.warn('media file not removed', { id, ...errorFields(err) }));
  }

  private async writeNow(id: string, bytes: Buffer): Promise<void> {
    const final = join(this.dir, id);
    const tmp = `${final}.tmp`;
    try {
      const fd = await openAsync(tmp, 'w');
      try {
        await this.writeAll(fd, bytes);
        await this.io.fsync(fd);
      } catch (err) {
        await closeAsync(fd);
        throw err;
      }
      // close(2) can report a deferred write error (NFS, quotas): it fails the upload like the rest.
      await closeAsync(fd);
      await rename(tmp, final);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    try {
      await this.syncDir();
    } catch (err) {
      // The name may not survive a power cut; an upload answered with an error keeps nothing.
      await rm(final, { force: true });
      throw err;
    }
  }

  /** write(2) may write fewer bytes than asked (a nearly full disk does): continue until all are. */
  private async writeAll(fd: number, bytes: Buffer): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) {
      const n = await this.io.write(fd, bytes, offset, bytes.length - offset);
      if (n <= 0) throw ioError('EIO', `write of media made no progress at byte ${offset} of ${bytes.length}`);
      offset += n;
    }
  }

  private async syncDir(): Promise<void> {
    const dirFd = await openAsync(this.dir, 'r');
    try {
      await this.io.fsync(dirFd);
    } finally {
      await closeAsync(dirFd);
    }
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
  private readonly countStmt: Statement;
  private readonly idsStmt: Statement;
  private readonly ownerBytesStmt: Statement;

  // Prepared on first use: they read social's `post_media`, which comes with a later migration.
  private servedStmt: Statement | undefined;
  private inLivePostStmt: Statement | undefined;
  private unpostedStmt: Statement | undefined;
  private forgetUnpostedStmt: Statement | undefined;
  private readonly anyCreatedStmt: Statement;
  private readonly deleteStmt: Statement;

  constructor(private readonly db: Sqlite) {
    this.ownerStmt = db.prepare('SELECT owner_id FROM media WHERE id = ?').pluck();
    this.insertStmt = db.prepare('INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, ?, ?, ?)');
    this.countStmt = db.prepare('SELECT COUNT(*) FROM media').pluck();
    this.idsStmt = db.prepare('SELECT id FROM media ORDER BY id').pluck();
    this.ownerBytesStmt = db.prepare('SELECT COALESCE(SUM(size), 0) FROM media WHERE owner_id = ?').pluck();
    this.anyCreatedStmt = db.prepare('SELECT EXISTS (SELECT 1 FROM media WHERE created_at >= ? AND created_at < ?)').pluck();
    this.deleteStmt = db.prepare('DELETE FROM media WHERE id = ?');
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

  /** The bytes of every file a user has uploaded (media_owner's index holds them). */
  bytesOf(ownerId: string): number {
    return this.ownerBytesStmt.get(ownerId) as number;
  }

  insert(id: string, ownerId: string, contentType: string, size: number, now: string): void {
    this.insertStmt.run(id, ownerId, contentType, size, now);
  }

  /** Whether any file was uploaded in [from, before) (media_created's index answers it). */
  anyCreated(from: string, before: string): boolean {
    return this.anyCreatedStmt.get(from, before) === 1;
  }

  /**
   * Files uploaded in [from, before) that no post has ever carried, oldest first, at most `limit`
   * of them. A file once posted stays posted (post_media keeps the rows of deleted posts).
   */
  unposted(from: string, before: string, limit: number): Array<{ id: string; size: number }> {
    this.unpostedStmt ??= this.db.prepare(
      `SELECT id, size FROM media m WHERE created_at >= ? AND created_at < ?
         AND NOT EXISTS (SELECT 1 FROM post_media pm WHERE pm.media_id = m.id)
       ORDER BY created_at, id LIMIT ?`,
    );
    return this.unpostedStmt.all(from, before, limit) as Array<{ id: string; size: number }>;
  }

  /**
   * Deletes the row of a file uploaded before `before` that no post carries; false when it is gone
   * or was posted meanwhile (a post and this delete are both writer transactions: one sees the other).
   */
  forgetUnposted(id: string, before: string): boolean {
    this.forgetUnpostedStmt ??= this.db.prepare(
      'DELETE FROM media WHERE id = ? AND created_at < ? AND NOT EXISTS (SELECT 1 FROM post_media pm WHERE pm.media_id = media.id)',
    );
    return this.forgetUnpostedStmt.run(id, before).changes === 1;
  }

  /** Whether a post that is not deleted carries the file. */
  inLivePost(id: string): boolean {
    this.inLivePostStmt ??= this.db
      .prepare('SELECT EXISTS (SELECT 1 FROM post_media pm JOIN posts p ON p.id = pm.post_id WHERE pm.media_id = ? AND p.deleted_at IS NULL)')
      .pluck();
    return this.inLivePostStmt.get(id) === 1;
  }

  delete(id: string): void {
    this.deleteStmt.run(id);
  }

  /**
   * A media's row while it is served: undefined when there is none, and when it was posted and
   * every post that carried it is deleted since (withdrawn). A file not posted yet is served.
   */
  served(id: string): MediaRow | undefined {
    this.servedStmt ??= this.db.prepare(
      `SELECT id, owner_id, content_type, size, created_at FROM media m WHERE id = ?
         AND (NOT EXISTS (SELECT 1 FROM post_media pm WHERE pm.media_id = m.id)
              OR EXISTS (SELECT 1 FROM post_media pm JOIN posts p ON p.id = pm.post_id WHERE pm.media_id = m.id AND p.deleted_at IS NULL))`,
    );
    return this.servedStmt.get(id) as MediaRow | undefined;
  }
}

/** Where a media file lives, relative to the data directory (MediaFiles writes it there). */
export function mediaFilePath(id: string): string {
  return join(MEDIA_DIR, id);
}

/** The media id of a path mediaFilePath gave, or undefined for any other path. */
export function mediaIdOfPath(path: string): string | undefined {
  const prefix = `${MEDIA_DIR}${sep}`;
  return path.startsWith(prefix) && path.length > prefix.length ? path.slice(prefix.length) : undefined;
}
