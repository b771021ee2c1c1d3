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

/**
 * The 413 of an upload that would take its user past the quota. The message, which clients show
 * as it is, gives sizes a person reads (`1 GiB`, `1.5 MiB`); the body has the exact bytes.
 */
export function overQuota(used: number, size: number, quotaBytes: number): HttpError {
  return new HttpError(
    'payload_too_large',
    `This upload (${readableBytes(size)}) would take your media past its quota of ${readableBytes(quotaBytes)} (${readableBytes(used)} used).`,
    { quota_bytes: quotaBytes, used_bytes: used },
  );
}

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `bytes` in the largest binary unit it reaches, to one decimal when not whole: `1.5 MiB`. */
export function readableBytes(bytes: number): string {
  let unit = 0;
  let value = bytes;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const rounded = Math.round(value * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded : rounded.toFixed(1)} ${UNITS[unit]}`;
}
