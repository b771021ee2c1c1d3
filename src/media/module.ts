// The media capability: uploaded images, their files under <data>/media and their rows.
import type { Capability } from '../capability';
import { MediaFiles, MediaStore, mediaFilePath } from './store';
import { MediaService } from './service';
import { mediaRoutes } from './routes';
import { mediaWrites, type MediaWrites } from './writes';
import { MIGRATIONS } from './migrations';

export const media: Capability = {
  name: 'media',
  migrations: MIGRATIONS,
  writes: mediaWrites,
  http(ctx) {
    const service = new MediaService(new MediaStore(ctx.sqlite), new MediaFiles(ctx.dataDir), ctx.writes.as<MediaWrites>(), ctx.newId, ctx.config.media.user_quota_bytes);
    return { routes: mediaRoutes(service) };
  },
  status: ({ sqlite }) => ({ media: new MediaStore(sqlite).count() }),
  // Every file a media row refers to: rows are committed after their file, so each has one.
  *backupFiles(db) {
    for (const id of new MediaStore(db).ids()) yield mediaFilePath(id);
  },
};
