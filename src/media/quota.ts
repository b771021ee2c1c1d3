// How many bytes of media each user may keep (`media.user_quota_bytes`): uploads are files on the
// server's disk, and without a bound one user's client (a script gone wrong, a stolen key) could
// fill it, and every write of everyone would then fail. Every file counts, posted or not, and a
// file whose posts are deleted still counts until its uploader deletes it (DELETE /api/media/{id});
// files never posted are forgotten after a day (media/upkeep.ts; docs/social.md).
import { HttpError } from '../http/errors';
import { humanBytes } from '../core/human-bytes';

/** 0 turns the quota off. */
export const NO_QUOTA = 0;

/** Whether a file of `size` bytes fits beside the `used` bytes a user holds already. */
export function fitsQuota(used: number, size: number, quotaBytes: number): boolean {
  return quotaBytes === NO_QUOTA || used + size <= quotaBytes;
}

/**
 * Throws the 413 of an upload of `size` bytes that would take its user past the quota; `used` is
 * what the user's files hold now (MediaStore.bytesOf). The message, which clients show as it is,
 * gives sizes a person reads (`1.0 GiB`); the body has the exact bytes.
 */
export function checkQuota(used: number, size: number, quotaBytes: number): void {
  if (fitsQuota(used, size, quotaBytes)) return;
  throw new HttpError(
    'payload_too_large',
    `This upload (${humanBytes(size)}) would take your media past its quota of ${humanBytes(quotaBytes)} (${humanBytes(used)} used).`,
    { quota_bytes: quotaBytes, used_bytes: used },
  );
}
