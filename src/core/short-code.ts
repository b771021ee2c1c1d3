// Short codes: random strings over [0-9A-Za-z], never a reserved root path. Codes are minted ahead
// of time into a pool (src/links/code-pool.ts); nothing here knows which codes were issued. Users
// may also choose a code of their own (an alias), with a wider alphabet: see aliasProblem.
import { randomBytes } from 'node:crypto';

export const CODE_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Root paths that belong to the service itself (CONTRACT §1); a code never equals one. */
export const RESERVED_PATHS: ReadonlySet<string> = new Set([
  'api', 'ws', 'app', 'assets', 'media', 'healthz', 'readyz', 'metrics', 'favicon.ico', 'robots.txt', '',
]);

export function isReservedCode(code: string): boolean {
  return RESERVED_PATHS.has(code) || RESERVED_PATHS.has(code.toLowerCase());
}

/**
 * The next code of `length` characters from a stream of random bytes. Bytes at or above 248
 * (= 4 × 62) are skipped so every character is uniformly distributed (no modulo bias).
 */
function codeFrom(length: number, nextByte: () => number): string {
  let out = '';
  while (out.length < length) {
    const b = nextByte();
    if (b < 248) out += CODE_ALPHABET[b % 62];
  }
  return out;
}

/** A stream of random bytes, drawn `drawSize()` at a time from `random`. */
function byteStream(random: (n: number) => Uint8Array, drawSize: () => number): () => number {
  let bytes: Uint8Array = new Uint8Array(0);
  let at = 0;
  return () => {
    if (at >= bytes.length) {
      bytes = random(drawSize());
      at = 0;
    }
    return bytes[at++];
  };
}

/** One random code of `length` characters. `random` is injectable for tests. */
export function generateCode(length: number, random: (n: number) => Uint8Array = randomBytes): string {
  return codeFrom(length, byteStream(random, () => length * 2));
}

/**
 * Fresh codes for the pool: distinct among themselves and never reserved. Random bytes are drawn
 * in bulk for many codes at once: one draw per code was most of the cost of filling a pool of
 * 10,000. About 3 % of bytes are skipped, so a draw asks for a little more than the remaining
 * codes need.
 */
export function generateCodes(count: number, length: number, random: (n: number) => Uint8Array = randomBytes): string[] {
  const seen = new Set<string>();
  const nextByte = byteStream(random, () => Math.max(64, Math.ceil((count - seen.size) * length * 1.1)));
  while (seen.size < count) {
    const code = codeFrom(length, nextByte);
    if (!isReservedCode(code)) seen.add(code);
  }
  return [...seen];
}

/** Length and alphabet of an alias: 3-64 of [A-Za-z0-9_-] (CONTRACT §2). */
export const ALIAS_MIN = 3;
export const ALIAS_MAX = 64;

/**
 * Segments under /api/links/ that are routes of their own: an alias equal to one (in any case)
 * would make its details unreachable at /api/links/{code}.
 */
export const RESERVED_ALIASES: ReadonlySet<string> = new Set(['export', 'bulk']);

function isCodeChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 /* _ */ || c === 45 /* - */;
}

/** What is wrong with a requested alias, or undefined when it may be taken (if it is free). */
export function aliasProblem(alias: string): string | undefined {
  if (alias.length < ALIAS_MIN || alias.length > ALIAS_MAX) return `must be ${ALIAS_MIN} to ${ALIAS_MAX} characters`;
  for (let i = 0; i < alias.length; i++) {
    if (!isCodeChar(alias.charCodeAt(i))) return 'may contain only A-Z, a-z, 0-9, _ and -';
  }
  const lower = alias.toLowerCase();
  if (RESERVED_PATHS.has(lower) || RESERVED_ALIASES.has(lower)) return `"${alias}" is reserved`;
  return undefined;
}

/**
 * Whether a path segment could be a code at all (cheap pre-check before any lookup): the union of
 * pool codes (4-32 of [0-9A-Za-z]) and aliases (3-64 of [A-Za-z0-9_-]).
 */
export function isCodeShaped(s: string): boolean {
  if (s.length < ALIAS_MIN || s.length > ALIAS_MAX) return false;
  for (let i = 0; i < s.length; i++) if (!isCodeChar(s.charCodeAt(i))) return false;
  return true;
}
