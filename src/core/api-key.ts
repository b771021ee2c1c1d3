// API keys are 192 random bits; only their SHA-256 is stored. A slow password hash is not needed:
// a key is not guessable, so the hash only has to make a stolen database useless for logging in.
import * as crypto from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'perch_';

export function newApiKey(): string {
  return KEY_PREFIX + randomBytes(24).toString('base64url');
}

export function newKeyId(): string {
  return 'key_' + randomBytes(8).toString('hex');
}

// crypto.hash (one call, no Hash object) is several times faster; older Node versions lack it.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

export function hashApiKey(key: string): string {
  return oneShot ? oneShot('sha256', key, 'hex') : createHash('sha256').update(key).digest('hex');
}
