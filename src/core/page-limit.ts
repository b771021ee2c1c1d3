// The contract's `?limit` of every list: an integer from 1 to 100, 20 when absent. Pure.

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/**
 * The page size `?limit=` asks for (null: the parameter is absent), or NaN when it is not an
 * integer from 1 to MAX_LIMIT. Leading zeros are allowed (`007` is 7, `0100` is 100), signs,
 * decimals and exponents are not.
 */
export function parseLimit(raw: string | null): number {
  if (raw === null) return DEFAULT_LIMIT;
  if (!/^[0-9]{1,10}$/.test(raw)) return NaN;
  const n = Number(raw);
  return n >= 1 && n <= MAX_LIMIT ? n : NaN;
}
