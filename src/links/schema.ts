// Request shapes of the link endpoints. Field rules that need configuration (the target URL's
// host, the blocklist) or the clock (expires_at in the future) are checked in service.ts.
import { z } from 'zod';

export const shortenBody = z.strictObject({
  url: z.string(),
  expires_at: z.string().nullable().optional(),
});
export type ShortenBody = z.infer<typeof shortenBody>;

export const patchBody = z.strictObject({
  url: z.string().optional(),
  expires_at: z.string().nullable().optional(),
});
export type PatchBody = z.infer<typeof patchBody>;

/** ISO 8601 date-time with a zone (Z or ±hh:mm), as the contract's timestamps. */
export const isoTimestamp = z.iso.datetime({ offset: true });
