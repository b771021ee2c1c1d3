// Passwords of protected links: only a slow, salted scrypt hash is stored, with its parameters,
// so that a later change of cost still verifies the hashes made before it. The async form runs on
// libuv's thread pool: a hash takes tens of milliseconds, which an HTTP thread must not block for.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const PASSWORD_MIN = 4;
export const PASSWORD_MAX = 128;

/** scrypt cost: N = 2^14, r = 8 (16 MiB of memory per hash), p = 1; a 16-byte salt, 32-byte key. */
const COST = { N: 16384, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;

function derive(password: string, salt: Buffer, keyLength: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem must cover 128·N·r; Node's default (32 MiB) leaves no room for a higher N.
    scrypt(password.normalize('NFC'), salt, keyLength, { ...opts, maxmem: 256 * opts.N! * opts.r! }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** What is wrong with a password for a link, or undefined. Lengths count code points. */
export function passwordProblem(password: string): string | undefined {
  const n = [...password].length;
  if (n < PASSWORD_MIN || n > PASSWORD_MAX) return `must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`;
  return undefined;
}

/** `scrypt$N$r$p$<salt base64url>$<key base64url>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, COST);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Whether `password` matches a hash made by hashPassword; false for anything malformed. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![N, r, p].every((v) => Number.isInteger(v) && v > 0)) return false;
  const salt = Buffer.from(parts[4], 'base64url');
  const expected = Buffer.from(parts[5], 'base64url');
  if (expected.length === 0) return false;
  const key = await derive(password, salt, expected.length, { N, r, p });
  return timingSafeEqual(key, expected);
}
