import t from 'tap';
import { createECDH, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { checkEndpoint, isLocalHostName, isPublicAddress } from '../../src/core/public-address';
import { authSecretProblem, newVapidKeys, p256dhProblem } from '../../src/core/push-keys';

t.test('isPublicAddress', async (t) => {
  for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '2a00:1450:4001::1']) t.ok(isPublicAddress(a), a);
  for (const a of [
    '127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1', '192.0.2.5',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '2001:db8::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '[::1]', 'example.com', '', '999.1.1.1',
  ]) t.notOk(isPublicAddress(a), a);
  t.ok(isPublicAddress('::ffff:8.8.8.8'), 'a mapped public IPv4 address is public');
  t.ok(isPublicAddress('::ffff:808:808'), 'the same, in groups');
  t.ok(isPublicAddress('64:ff9b::808:808'), 'NAT64 of a public IPv4 address');
  // Only global unicast (2000::/3) is public: the IPv4-compatible form (which the URL parser writes
  // ::127.0.0.1 as), the IPv4-translated form and anything unassigned are not, whatever they wrap.
  for (const a of [
    '::127.0.0.1', '::7f00:1', '::a00:1', '::2', '::8.8.8.8', '::808:808', '::ffff:0:7f00:1', '::ffff:0:808:808',
    '64:ff9b:1::1', '100::1', '4000::1', 'e000::1', '3fff::1', '2002:7f00:1::', '2001::1',
  ]) t.notOk(isPublicAddress(a), a);
});

t.test('isLocalHostName', async (t) => {
  for (const h of ['localhost', 'LOCALHOST', 'a.localhost', 'printer.local', 'db.internal', 'nas.lan', 'x.home.arpa', 'intranet', 'localhost.']) t.ok(isLocalHostName(h), h);
  for (const h of ['fcm.googleapis.com', 'updates.push.services.mozilla.com', 'push.example.com']) t.notOk(isLocalHostName(h), h);
});

t.test('checkEndpoint', async (t) => {
  const ok = (raw: string, insecure = false) => checkEndpoint(raw, insecure).ok;
  const why = (raw: string, insecure = false) => {
    const r = checkEndpoint(raw, insecure);
    return r.ok ? 'ok' : r.message;
  };
  t.ok(ok('https://fcm.googleapis.com/fcm/send/abc'));
  t.ok(ok('https://8.8.8.8/push'));
  t.equal(why('http://push.example.com/x'), 'must be an https URL');
  t.equal(why('https://127.0.0.1/x'), 'must not point at a private, loopback or reserved address');
  t.equal(why('https://[::1]:8443/x'), 'must not point at a private, loopback or reserved address');
  t.equal(why('https://10.0.0.8/x'), 'must not point at a private, loopback or reserved address');
  t.equal(why('https://169.254.169.254/latest'), 'must not point at a private, loopback or reserved address');
  t.equal(why('https://localhost/x'), 'must not point at a local host name');
  for (const literal of ['[::127.0.0.1]', '[::7f00:1]', '[::a00:1]', '[::2]', '[::ffff:0:7f00:1]']) {
    t.equal(why(`https://${literal}/x`), 'must not point at a private, loopback or reserved address', literal);
  }
  t.ok(ok('https://[2606:4700::1111]/x'), 'a global unicast literal');
  t.equal(why('https://user:pw@push.example.com/x'), 'must not carry credentials');
  t.equal(why('not a url'), 'must be an absolute URL');
  t.equal(why('ftp://push.example.com/x'), 'must be an https URL');
  t.equal(why('https://push.example.com/' + 'a'.repeat(2048)), 'must be at most 2048 characters');
  t.ok(ok('http://127.0.0.1:9000/push', true), 'allowed for tests and private push services');
  t.ok(ok('https://localhost/x', true));
  t.equal(why('ftp://127.0.0.1/x', true), 'must be an https URL');
});

t.test('push subscription keys', async (t) => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const point = ecdh.getPublicKey();
  t.equal(p256dhProblem(point.toString('base64url')), null);
  t.equal(p256dhProblem(point.subarray(0, 33).toString('base64url')), 'must be an uncompressed P-256 public key (65 bytes), base64url');
  const off = Buffer.from(point);
  off[64] ^= 1;
  t.equal(p256dhProblem(off.toString('base64url')), 'is not a point on the P-256 curve');
  t.equal(p256dhProblem('not base64!'), 'must be an uncompressed P-256 public key (65 bytes), base64url');
  t.equal(authSecretProblem(randomBytes(16).toString('base64url')), null);
  t.equal(authSecretProblem(randomBytes(15).toString('base64url')), 'must be 16 bytes, base64url');
  t.equal(authSecretProblem(''), 'must be 16 bytes, base64url');
});

t.test('a new VAPID key pair is a P-256 pair in the form web-push signs with', async (t) => {
  const keys = newVapidKeys();
  const pub = Buffer.from(keys.publicKey, 'base64url');
  const priv = Buffer.from(keys.privateKey, 'base64url');
  t.equal(pub.length, 65);
  t.equal(pub[0], 0x04, 'an uncompressed point');
  t.equal(p256dhProblem(keys.publicKey), null, 'on the curve');
  t.equal(priv.length, 32);
  // The private scalar gives back the same public point.
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(priv);
  t.same(ecdh.getPublicKey(), pub, 'the two keys are one pair');
  const webPush = (await import('web-push')).default;
  const headers = webPush.getVapidHeaders('https://push.example.com', 'mailto:admin@example.com', keys.publicKey, keys.privateKey, 'aes128gcm');
  t.match(headers.Authorization, /^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=[\w-]+$/);
  t.not(newVapidKeys().privateKey, keys.privateKey, 'each pair is new');
});

// Node.js 20 deadlocks when a garbage collection lands inside a KeyObject's JWK export and
// finalises the job that generated the key: the way the keys were once made hung a server's first
// start. A young generation of 1 MiB makes collections frequent enough that 20,000 pairs made
// that way hung in every run tried; made as they are now, they end, and every pair is a pair,
// including the scalars with leading zero bytes (about one in 256).
t.test('many VAPID key pairs under frequent garbage collection: no hang, every pair whole', async (t) => {
  const script = `
    const { createECDH } = require('node:crypto');
    const { newVapidKeys } = require(${JSON.stringify(require.resolve('../../src/core/push-keys'))});
    let padded = 0;
    for (let i = 0; i < 20000; i++) {
      const k = newVapidKeys();
      const pub = Buffer.from(k.publicKey, 'base64url');
      const priv = Buffer.from(k.privateKey, 'base64url');
      if (pub.length !== 65 || priv.length !== 32) throw new Error('lengths ' + pub.length + ' ' + priv.length);
      if (priv[0] === 0) padded++;
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(priv);
      if (!ecdh.getPublicKey().equals(pub)) throw new Error('not a pair');
    }
    process.stdout.write(JSON.stringify({ padded }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=1', '-e', script], { timeout: 90_000, killSignal: 'SIGKILL' });
  const { padded } = JSON.parse(stdout) as { padded: number };
  t.ok(padded > 0, `scalars with a leading zero byte were padded (${padded})`);
});
