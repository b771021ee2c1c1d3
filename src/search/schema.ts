// zod shapes of search's query strings. Parameters they do not name are ignored, as on every list.
import { z } from 'zod';

export const SUGGEST_DEFAULT_LIMIT = 10;
export const SUGGEST_MAX_LIMIT = 20;

export const searchParams = z.object({
  q: z.string({ error: 'is required' }),
  sort: z.enum(['recent', 'relevance'], { error: 'must be "recent" or "relevance"' }).default('recent'),
});

export const suggestParams = z.object({
  prefix: z.string({ error: 'is required' }),
  limit: z
    .string()
    .regex(/^[0-9]{1,10}$/, { error: `must be an integer from 1 to ${SUGGEST_MAX_LIMIT}` })
    .transform(Number)
    .pipe(z.number().min(1, { error: `must be an integer from 1 to ${SUGGEST_MAX_LIMIT}` }).max(SUGGEST_MAX_LIMIT, { error: `must be an integer from 1 to ${SUGGEST_MAX_LIMIT}` }))
    .default(SUGGEST_DEFAULT_LIMIT),
});
