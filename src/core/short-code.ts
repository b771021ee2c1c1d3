// Short codes: random strings over [0-9A-Za-z], never a reserved root path. Codes are minted ahead
// of time into a pool (src/links/code-pool.ts); nothing here knows which codes were issued.
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

/** Whether a path segment could be a code at all (cheap pre-check before any lookup). */
export function isCodeShaped(s: string): boolean {
  if (s.length < 4 || s.length > 32) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const digit = c >= 48 && c <= 57;
    const upper = c >= 65 && c <= 90;
    const lower = c >= 97 && c <= 122;
    if (!digit && !upper && !lower) return false;
  }
  return true;
}
