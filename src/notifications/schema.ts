// Request shapes of the notification and Web Push endpoints.
import { z } from 'zod';

/** Ids a preference list may hold at most. */
export const MAX_PREFERENCE_IDS = 1000;

const idList = z
  .array(z.string())
  .refine((ids) => ids.length <= MAX_PREFERENCE_IDS, `at most ${MAX_PREFERENCE_IDS} ids`);

// PUT replaces the whole object: a field left out takes its default (no muted posts, no priority
// users, every type on), so a client may send only what differs from the defaults.
export const preferencesSchema = z.strictObject({
  muted_post_ids: idList.optional(),
  priority_user_ids: idList.optional(),
  types: z
    .strictObject({
      like: z.boolean().optional(),
      reply: z.boolean().optional(),
      follow: z.boolean().optional(),
    })
    .optional(),
});

export type PreferencesInput = z.infer<typeof preferencesSchema>;

// A browser's PushSubscription.toJSON(): `expirationTime` is part of it (null, or when the
// subscription ends), so it is accepted and ignored.
export const subscriptionSchema = z.strictObject({
  endpoint: z.string(),
  expirationTime: z.number().nullable().optional(),
  keys: z.strictObject({
    p256dh: z.string(),
    auth: z.string(),
  }),
});

export type SubscriptionInput = z.infer<typeof subscriptionSchema>;
