// POST /api/media (raw image upload), DELETE /api/media/{id} and GET /media/{id}.
import type { Route } from '../http/router';
import { ifNoneMatchMatches } from '../core/etag';
import { MEDIA_MAX_BYTES, type MediaService } from './service';

// The bytes behind a media id never change, but a file stops being served when its posts are
// deleted: caches may keep it an hour, then revalidate (a 304 while it is still served).
const CACHE = 'public, max-age=3600';

export function mediaRoutes(media: MediaService): Route[] {
  return [
    {
      method: 'POST',
      path: '/api/media',
      auth: true,
      body: 'raw',
      maxBodyBytes: MEDIA_MAX_BYTES,
      async handler(ctx) {
        const uploaded = await media.upload(ctx.principal!.userId, ctx.headers.contentType, ctx.raw!);
        return { status: 201, json: uploaded };
      },
    },
    {
      method: 'DELETE',
      path: '/api/media/:id',
      auth: true,
      async handler(ctx) {
        await media.delete(ctx.principal!.userId, ctx.params[0]);
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/media/:id',
      async handler(ctx) {
        const id = ctx.params[0];
        const row = media.get(id);
        const etag = `"${id}"`;
        const headers = { 'Cache-Control': CACHE, ETag: etag, 'X-Content-Type-Options': 'nosniff' };
        // A cache revalidating what it holds: the bytes never change, so while the file is served (get
        // above) and still on disk, the answer is yes.
        if (ifNoneMatchMatches(ctx.headers.ifNoneMatch, etag)) {
          await media.present(id);
          return { status: 304, headers };
        }
        return { status: 200, body: await media.read(id), contentType: row.content_type, headers };
      },
    },
  ];
}
