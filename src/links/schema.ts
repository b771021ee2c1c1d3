// Request shapes of the link endpoints. Field rules that need configuration (the target URL's
// host, the blocklist) or the clock (expires_at in the future) are checked in service.ts.
import { z } from 'zod';

export const shortenBody = z.strictObject({
  url: z.string(),
  expires_at: z.string().nullable().optional(),
  alias: z.string().optional(),
  password: z.string().optional(),
});
export type ShortenBody = z.infer<typeof shortenBody>;

export const patchBody = z.strictObject({
  url: z.string().optional(),
  expires_at: z.string().nullable().optional(),
  password: z.string().nullable().optional(),
});
export type PatchBody = z.infer<typeof patchBody>;

/** Entries per bulk creation, at most. */
export const BULK_MAX = 100;

/**
 * POST /api/links/bulk: the envelope only. Each entry is checked on its own against shortenBody,
 * so that one malformed entry fails alone, as its single creation would.
 */
export const bulkBody = z.strictObject({
  links: z.array(z.unknown()).min(1, `must hold 1 to ${BULK_MAX} entries`).max(BULK_MAX, `must hold 1 to ${BULK_MAX} entries`),
});

/** The password sent to POST /{code}, as JSON. */
export const passwordBody = z.strictObject({ password: z.string() });

export const QR_FORMATS = ['svg', 'png'] as const;
export const qrQuery = z.object({
  format: z.enum(QR_FORMATS, { message: 'must be svg or png' }).default('svg'),
  size: z
    .string()
    .regex(/^\d{1,4}$/, 'must be an integer from 64 to 1024')
    .transform(Number)
    .pipe(z.number().min(64, 'must be an integer from 64 to 1024').max(1024, 'must be an integer from 64 to 1024'))
    .default(256),
});

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export const exportQuery = z.object({
  format: z.enum(EXPORT_FORMATS, { message: 'must be csv or json' }).default('csv'),
  user: z.string().min(1).optional(),
});

/** ISO 8601 date-time with seconds and a zone (Z or ±hh:mm), as the contract's timestamps. */
const fullIsoTimestamp = z.iso.datetime({ offset: true });

/**
 * The milliseconds of an ISO 8601 date-time with a zone, or NaN. Besides the full form it takes
 * what ISO 8601 also allows and clients send: minutes without seconds (`2027-01-01T09:30Z`) and
 * a zone without its colon (`+0530`), read as `:00` seconds and `+05:30`.
 */
export function isoTimestampMs(text: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.exec(text);
  if (!m) return NaN;
  const zone = m[3].length === 5 ? `${m[3].slice(0, 3)}:${m[3].slice(3)}` : m[3];
  const full = `${m[1]}${m[2] ?? ':00'}${zone}`;
  return fullIsoTimestamp.safeParse(full).success ? Date.parse(full) : NaN;
}
