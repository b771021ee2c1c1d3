// The media capability: uploaded images, their files under <data>/media and their rows, and the
// upkeep that forgets files never posted (upkeep.ts).
import type { Capability } from '../capability';
import { UPKEEP_LANE } from '../server/upkeep-lane';
import { log } from '../log';
import { MediaFiles, MediaStore, mediaFilePath, mediaIdOfPath } from './store';
import { MediaService } from './service';
import { mediaRoutes } from './routes';
import { mediaWrites, type MediaWrites } from './writes';
import { MIGRATIONS } from './migrations';
import { MEDIA_TASKS } from './tasks';
import { ORPHAN_MIN_AGE_MS, ORPHAN_SWEEP_EVERY_MS, UNPOSTED_BATCH, sweepFrom, sweepPeriodMs, unpostedHorizon } from './upkeep';

export const media: Capability = {
  name: 'media',
  migrations: MIGRATIONS,
  writes: mediaWrites,
  tasks: MEDIA_TASKS,
  http(ctx) {
    const service = new MediaService(new MediaStore(ctx.sqlite), new MediaFiles(ctx.dataDir), ctx.writes.as<MediaWrites>(), ctx.newId, ctx.config.media.user_quota_bytes);
    return { routes: mediaRoutes(service) };
  },

  jobs(ctx) {
    const ttlMs = ctx.config.media.unposted_ttl_seconds * 1000;
    const store = new MediaStore(ctx.sqlite);
    const files = new MediaFiles(ctx.dataDir);
    const writes = ctx.writes.as<MediaWrites>();
    /**
     * Every upload before this time has been looked at (less COMMIT_MARGIN_MS, looked at again):
     * those not posted then are gone. From the start of the store at each start of the server.
     */
    let sweptBefore = '';
    /** The first look for files without a row comes an hour after the start, when any could be one. */
    let orphansDue = Date.now() + ORPHAN_MIN_AGE_MS;
    return [
      {
        name: 'media.upkeep',
        // Its tasks queue in the background pool behind no other upkeep (server/upkeep-lane.ts).
        lane: UPKEEP_LANE,
        everyMs: sweepPeriodMs(ttlMs),
        async run(c) {
          const now = Date.now();
          if (now >= orphansDue) {
            orphansDue = now + ORPHAN_SWEEP_EVERY_MS;
            const swept = await c.runTask(MEDIA_TASKS, 'media.sweepOrphanFiles', { nowMs: now });
            if (swept.removed > 0) log.info('media files without a row removed', swept);
          }
          if (ttlMs === 0) return;
          const before = unpostedHorizon(now, ttlMs);
          const from = sweepFrom(sweptBefore);
          // Most passes end here, on the supervisor's thread: nothing uploaded since the last one
          // is old enough yet.
          if (!store.anyCreated(from, before)) {
            sweptBefore = before;
            return;
          }
          const found = await c.runTask(MEDIA_TASKS, 'media.findUnposted', { from, before, limit: UNPOSTED_BATCH });
          if (found.files.length > 0) {
            // The writer forgets only those still unposted; a row goes before its file, never after.
            const forgotten = await writes.run('forgetUnpostedMedia', { files: found.files, before });
            for (const f of forgotten) await files.discard(f.id);
            if (forgotten.length > 0) log.info('unposted media removed', { files: forgotten.length, bytes: forgotten.reduce((n, f) => n + f.size, 0) });
          }
          if (!found.complete) return 1000;
          sweptBefore = before;
        },
      },
    ];
  },

  status: ({ sqlite }) => ({ media: new MediaStore(sqlite).count() }),
  // Every file a media row refers to: rows are committed after their file and deleted before it,
  // so each has one.
  *backupFiles(db) {
    for (const id of new MediaStore(db).ids()) yield mediaFilePath(id);
  },
  // A file deleted while the backup ran: its row goes too, as it went in the live database (it
  // would otherwise count against its user's quota, and be missing from every later backup).
  forgetBackupFiles(db, files) {
    const store = new MediaStore(db);
    for (const path of files) {
      const id = mediaIdOfPath(path);
      if (id !== undefined) store.delete(id);
    }
  },
};
