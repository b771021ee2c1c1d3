// The keys of a browser's push subscription (RFC 8291): `p256dh`, the user agent's P-256 public
// key as an uncompressed point, and `auth`, a 16-byte secret, both base64url. A malformed key would
// only fail later, in every encryption for that subscription, so it is refused when subscribing.
import { createECDH, createPublicKey } from 'node:crypto';

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function decode(raw: string): Buffer | null {
  if (!BASE64URL.test(raw)) return null;
  return Buffer.from(raw.replace(/=+$/, ''), 'base64url');
}

/** Why `raw` is not a usable p256dh key, or null when it is. */
export function p256dhProblem(raw: string): string | null {
  const bytes = decode(raw);
  if (!bytes || bytes.length !== 65 || bytes[0] !== 0x04) return 'must be an uncompressed P-256 public key (65 bytes), base64url';
  try {
    // Refuses coordinates that are not a point on the curve.
    createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: bytes.subarray(1, 33).toString('base64url'), y: bytes.subarray(33).toString('base64url') }, format: 'jwk' });
  } catch {
    return 'is not a point on the P-256 curve';
  }
  return null;
}

/** Why `raw` is not a usable auth secret, or null when it is. */
export function authSecretProblem(raw: string): string | null {
  const bytes = decode(raw);
  return bytes && bytes.length === 16 ? null : 'must be 16 bytes, base64url';
}

/**
 * A new VAPID key pair (RFC 8292): the public key as an uncompressed P-256 point (65 bytes), the
 * private key as its 32-byte scalar, both base64url, the form browsers and web-push take. Made
 * here rather than by web-push so that a first start does not load web-push and what it requires
 * for good into the main thread's heap (docs/memory.md).
 *
 * Made with ECDH, which hands over both keys as bytes, and not as a KeyObject exported to JWK:
 * Node.js 20 can deadlock there. The JWK export holds the key's mutex while it allocates on the
 * JavaScript heap; a garbage collection at that moment finalises the key-generation job that made
 * the key, and the job's destructor waits for the same mutex on the same thread. It hung a
 * server's first start, for good, before it listened.
 */
export function newVapidKeys(): { publicKey: string; privateKey: string } {
  const ecdh = createECDH('prime256v1');
  const publicKey = ecdh.generateKeys();
  // The scalar is a big number's bytes: one with leading zero bytes comes back shorter than 32.
  const scalar = ecdh.getPrivateKey();
  const privateKey = Buffer.alloc(32);
  scalar.copy(privateKey, 32 - scalar.length);
  return { publicKey: publicKey.toString('base64url'), privateKey: privateKey.toString('base64url') };
}
