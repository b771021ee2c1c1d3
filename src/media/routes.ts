// POST /api/media (raw image upload) and GET /media/{id}.
import { HttpError, diskFull, invalidField, isDiskFull, notFound } from '../http/errors';
import type { Route } from '../http/router';
import { isIdString } from '../core/snowflake';
import { ifNoneMatchMatches } from '../core/etag';
import { baseContentType, isMediaType, sniffMediaType } from '../core/media-type';
import type { SocialService } from '../social/service';
import type { MediaFiles } from './store';

export const MEDIA_MAX_BYTES = 5 * 1024 * 1024;

// Media never changes once uploaded: its URL can be cached for as long as caches allow.
const IMMUTABLE = 'public, max-age=31536000, immutable';

export function mediaRoutes(social: SocialService, files: MediaFiles, newId: () => string): Route[] {
  return [
    {
      method: 'POST',
      path: '/api/media',
      auth: true,
      body: 'raw',
      maxBodyBytes: MEDIA_MAX_BYTES,
      async handler(ctx) {
        const declared = baseContentType(ctx.headers.contentType);
        if (!isMediaType(declared)) {
          throw new HttpError('unsupported_media_type', 'Upload a PNG, JPEG, GIF or WebP image with its Content-Type.');
        }
        const bytes = ctx.raw!;
        if (bytes.length === 0) throw invalidField('', 'the body is empty');
        const actual = sniffMediaType(bytes);
        if (actual !== declared) {
          throw invalidField('', actual ? `the body is ${actual}, not ${declared}` : `the body is not a ${declared} image`);
        }
        const id = newId();
        const owner = ctx.principal!.userId;
        try {
          files.write(id, bytes);
        } catch (err) {
          // Nothing was kept (MediaFiles.write): a full disk is worth a retry later, not a 500.
          if (isDiskFull(err)) throw diskFull(err, 'media upload');
          throw err;
        }
        await social.insertMedia(id, owner, declared, bytes.length);
        return { status: 201, json: { id, content_type: declared, size: bytes.length, url: `/media/${id}` } };
      },
    },
    {
      method: 'GET',
      path: '/media/:id',
      async handler(ctx) {
        const id = ctx.params[0];
        const row = isIdString(id) ? social.store.media(id) : undefined;
        if (!row) throw notFound('No such media.');
        const etag = `"${id}"`;
        const headers = { 'Cache-Control': IMMUTABLE, ETag: etag, 'X-Content-Type-Options': 'nosniff' };
        // A cache revalidating what it holds: the bytes never change, so the answer is always yes.
        if (ifNoneMatchMatches(ctx.headers.ifNoneMatch, etag)) return { status: 304, headers };
        return { status: 200, body: await files.read(id), contentType: row.content_type, headers };
      },
    },
  ];
}
