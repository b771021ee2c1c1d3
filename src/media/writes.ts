// The media capability's durable write: an uploaded file's metadata row, committed by the writer
// once the file itself is on disk (routes.ts).
import type { Sqlite } from '../store/sqlite';
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
  };
}

export type MediaWrites = ReturnType<typeof mediaWrites>;
