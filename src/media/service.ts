// Uploads and reads of media, independent of HTTP: an upload is checked (declared type, sniffed
// bytes), written durably as a file, then recorded by the writer.
import { HttpError, diskFull, invalidField, isDiskFull, notFound } from '../http/errors';
import { MEDIA_ID_RANDOM_BYTES, isMediaId, mediaId } from '../core/media-id';
import { randomBytes } from 'node:crypto';
import { isoNow } from '../core/clock';
import { baseContentType, isMediaType, sniffMediaType } from '../core/media-type';
import type { Writes } from '../writer/operations';
import type { MediaFiles, MediaRow, MediaStore } from './store';
import type { MediaWrites } from './writes';
import { checkQuota } from './quota';

export const MEDIA_MAX_BYTES = 5 * 1024 * 1024;

export interface Uploaded {
  id: string;
  content_type: string;
  size: number;
  url: string;
}

export class MediaService {
  constructor(
    private readonly store: MediaStore,
    private readonly files: MediaFiles,
    private readonly writes: Writes<MediaWrites>,
    private readonly newId: () => string,
    /** Bytes of media each user may keep; 0 for no limit (media/quota.ts). */
    private readonly quotaBytes: number,
  ) {}

  /** Stores an upload of `contentType` (as the request declared it); resolves once committed. */
  async upload(ownerId: string, contentType: string, bytes: Buffer): Promise<Uploaded> {
    const declared = baseContentType(contentType);
    if (!isMediaType(declared)) {
      throw new HttpError('unsupported_media_type', 'Upload a PNG, JPEG, GIF or WebP image with its Content-Type.');
    }
    if (bytes.length === 0) throw invalidField('', 'the body is empty');
    const actual = sniffMediaType(bytes);
    if (actual !== declared) {
      throw invalidField('', actual ? `the body is ${actual}, not ${declared}` : `the body is not an image of type ${declared}`);
    }
    // Checked again by the writer (writes.ts); this spares writing a file only to remove it.
    checkQuota(this.store.bytesOf(ownerId), bytes.length, this.quotaBytes);
    const id = mediaId(this.newId(), randomBytes(MEDIA_ID_RANDOM_BYTES));
    try {
      await this.files.write(id, bytes);
    } catch (err) {
      // Nothing was kept (MediaFiles.write): a full disk is worth a retry later, not a 500.
      if (isDiskFull(err)) throw diskFull(err, 'media upload');
      throw err;
    }
    try {
      await this.writes.run('insertMedia', { id, ownerId, contentType: declared, size: bytes.length, now: isoNow(), quotaBytes: this.quotaBytes });
    } catch (err) {
      // Refused inside the transaction (over the quota): no row refers to the file, and an upload
      // answered with an error keeps nothing. Any other failure (the writer gone, a 503) may have
      // come after the row was committed, so the file stays: a file without a row is never served
      // nor backed up, while a row without its file would break the rule that every row has one.
      if (err instanceof HttpError && err.status < 500) await this.files.remove(id);
      throw err;
    }
    return { id, content_type: declared, size: bytes.length, url: `/media/${id}` };
  }

  /**
   * A media's row; 404 when there is none (a malformed id names none), and when every post that
   * carried it is deleted: a deleted post's images go with it (docs/social.md, "Media").
   */
  get(id: string): MediaRow {
    const row = isMediaId(id) ? this.store.served(id) : undefined;
    if (!row) throw notFound('No such media.');
    return row;
  }

  /**
   * Deletes a file at its uploader's request (media/writes.ts, deleteMedia): its row, then the file
   * (MediaFiles.discard).
   */
  async delete(ownerId: string, id: string): Promise<void> {
    if (!isMediaId(id)) throw notFound('No such media.');
    await this.writes.run('deleteMedia', { id, ownerId });
    await this.files.discard(id);
  }

  /**
   * A served file's bytes; 404 when the file is gone: deleted between the row's read and this one,
   * or lost (a backup restored without it: docs/deploy.md, "Backups").
   */
  read(id: string): Promise<Buffer> {
    return this.files.read(id).catch(goneAsNotFound);
  }

  /**
   * Resolves if a served file's bytes are still there, for a cache revalidating its copy (which
   * reads no bytes); 404 as `read` when they are not.
   */
  present(id: string): Promise<void> {
    return this.files.present(id).catch(goneAsNotFound);
  }
}

function goneAsNotFound(err: NodeJS.ErrnoException): never {
  throw err.code === 'ENOENT' ? notFound('No such media.') : err;
}
