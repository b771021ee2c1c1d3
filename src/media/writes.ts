// The media capability's durable writes: an uploaded file's metadata row, committed by the writer
// once the file itself is on disk (routes.ts), and the removal of rows whose files go (a file its
// uploader deletes, files never posted: upkeep.ts). A file is removed after its row, never before:
// every row has its file.
import type { Sqlite } from '../store/sqlite';
import { conflict, forbidden, notFound } from '../http/errors';
import { MediaStore } from './store';
import { checkQuota } from './quota';

export function mediaWrites(db: Sqlite) {
  const store = new MediaStore(db);
  return {
    /**
     * Records a file already on disk. The quota is checked here, inside the transaction, where it
     * sees every upload committed before: the check before the file was written (service.ts) can
     * miss uploads of the same user in flight beside it.
     */
    insertMedia(a: { id: string; ownerId: string; contentType: string; size: number; now: string; quotaBytes: number }): void {
      checkQuota(store.bytesOf(a.ownerId), a.size, a.quotaBytes);
      store.insert(a.id, a.ownerId, a.contentType, a.size, a.now);
    },

    /**
     * Forgets a file at its uploader's request: one no post carries, or whose every post is
     * deleted. A file in a post that is not deleted stays (the post would lose an image).
     */
    deleteMedia(a: { id: string; ownerId: string }): void {
      const owner = store.owner(a.id);
      if (owner === undefined) throw notFound('No such media.');
      if (owner !== a.ownerId) throw forbidden('Only its uploader can delete a media file.');
      if (store.inLivePost(a.id)) throw conflict('This file is in a post; delete the post first.');
      store.delete(a.id);
    },

    /**
     * Forgets the files of `ids` uploaded before `before` and never posted: those a post took
     * meanwhile stay. Returns the ones forgotten, whose files may then go.
     */
    forgetUnpostedMedia(a: { files: Array<{ id: string; size: number }>; before: string }): Array<{ id: string; size: number }> {
      return a.files.filter((f) => store.forgetUnposted(f.id, a.before));
    },
  };
}

export type MediaWrites = ReturnType<typeof mediaWrites>;
