// The media capability's durable write: an uploaded file's metadata row, committed by the writer
// once the file itself is on disk (routes.ts).
import type { Sqlite } from '../store/sqlite';
import { MediaStore } from './store';

export function mediaWrites(db: Sqlite) {
  const store = new MediaStore(db);
  return {
    insertMedia(a: { id: string; ownerId: string; contentType: string; size: number; now: string }): void {
      store.insert(a.id, a.ownerId, a.contentType, a.size, a.now);
    },
  };
}

export type MediaWrites = ReturnType<typeof mediaWrites>;
