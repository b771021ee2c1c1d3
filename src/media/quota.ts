// How many bytes of media each user may keep (`media.user_quota_bytes`): uploads are files on the
// server's disk, and without a bound one user's client (a script gone wrong, a stolen key) could
// fill it, and every write of everyone would then fail. Every file counts, posted or not, and a
// file whose posts are deleted still counts: it stays on disk and in backups (docs/social.md).
import { HttpError } from '../http/errors';

/** 0 turns the quota off. */
export const NO_QUOTA = 0;

/** Whether a file of `size` bytes fits beside the `used` bytes a user holds already. */
export function fitsQuota(used: number, size: number, quotaBytes: number): boolean {
  return quotaBytes === NO_QUOTA || used + size <= quotaBytes;
}

/** The 413 of an upload that would take its user past the quota; says what is used and allowed. */
export function overQuota(used: number, size: number, quotaBytes: number): HttpError {
  return new HttpError(
    'payload_too_large',
    `This upload of ${size} bytes would take your media past its quota of ${quotaBytes} bytes (${used} used).`,
    { quota_bytes: quotaBytes, used_bytes: used },
  );
}
