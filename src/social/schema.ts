// Request shapes of the microblog endpoints.
import { z } from 'zod';

export const createPostSchema = z.strictObject({
  text: z.string(),
  // A refinement, not .max(): zod also applies .max() to a value that is not an array (a string's
  // length), which added a second, wrong detail to the 400.
  media_ids: z
    .array(z.string())
    .refine((ids) => ids.length <= 4, 'at most 4 media ids')
    .optional(),
  reply_to: z.string().nullable().optional(),
});
