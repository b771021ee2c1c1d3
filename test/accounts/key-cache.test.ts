import t from 'tap';
import { rmSync } from 'node:fs';
import { PrincipalCache, announceKeyRevocation, revocationVersion } from '../../src/accounts/key-cache';
import { openHotStore } from '../../src/store/lmdb';
import { tempDataDir } from '../helpers/server';
import type { Principal } from '../../src/accounts/store';

function fixture() {
  const keys = new Map<string, Principal>([['h1', { userId: 'u1', keyId: 'k1', admin: false }]]);
  let lookups = 0;
  let version = 0;
  let clock = 1_000;
  const cache = new PrincipalCache(
    (hash) => {
      lookups++;
      return keys.get(hash);
    },
    () => version,
    1000,
    () => clock,
  );
  return {
    cache,
    keys,
    lookups: () => lookups,
    bump: () => version++,
    advance: (ms: number) => (clock += ms),
  };
}

t.test('a known key is looked up once and then served from the cache', async (t) => {
  const f = fixture();
  t.same(f.cache.get('h1'), { userId: 'u1', keyId: 'k1', admin: false });
  t.same(f.cache.get('h1')?.userId, 'u1');
  t.equal(f.lookups(), 1);
});

t.test('unknown keys are never cached', async (t) => {
  const f = fixture();
  t.equal(f.cache.get('nope'), undefined);
  t.equal(f.cache.get('nope'), undefined);
  t.equal(f.lookups(), 2);
  f.keys.set('nope', { userId: 'u2', keyId: 'k2', admin: true });
  t.equal(f.cache.get('nope')?.userId, 'u2', 'a key added later works at once');
});

t.test('a revocation made elsewhere takes effect within the TTL', async (t) => {
  const f = fixture();
  f.cache.get('h1');
  f.keys.delete('h1');
  f.advance(999);
  t.ok(f.cache.get('h1'), 'still cached just before the TTL');
  f.advance(1);
  t.equal(f.cache.get('h1'), undefined, 'gone once the TTL is over');
  t.equal(f.cache.get('h1'), undefined);
});

t.test('an announced revocation empties the cache at once', async (t) => {
  const f = fixture();
  f.cache.get('h1');
  f.keys.delete('h1');
  f.bump();
  t.equal(f.cache.get('h1'), undefined);
  t.equal(f.lookups(), 2);
});

t.test('the revocation counter is read once per event-loop turn, and a revocation is seen from the next', async (t) => {
  const dir = tempDataDir();
  const hot = openHotStore(dir);
  t.teardown(async () => {
    await hot.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  const version = revocationVersion(hot);
  t.equal(version(), 0, 'no revocation yet');
  announceKeyRevocation(hot);
  t.equal(version(), 0, 'the same turn keeps the value it read');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(version(), 1, 'the next turn reads the revocation');
  announceKeyRevocation(hot);
  announceKeyRevocation(hot);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(version(), 3, 'and every one after it');
});
