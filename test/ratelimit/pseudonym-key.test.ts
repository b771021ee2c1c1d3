// The pseudonym key in the hot store: one for every handle on the data directory, made once,
// replaced when an hour old.
import t from 'tap';
import { rmSync } from 'node:fs';
import { tempDataDir } from '../helpers/server';
import { openHotStore } from '../../src/store/lmdb';
import { PSEUDONYM_KEY_MAX_AGE_MS, PseudonymKeys } from '../../src/ratelimit/pseudonym-key';

const now = Date.UTC(2026, 10, 28, 12, 0, 0);

t.test('one key for every handle until it is an hour old, then a new one for all', async (t) => {
  const dataDir = tempDataDir();
  const one = openHotStore(dataDir);
  const two = openHotStore(dataDir);
  t.teardown(async () => {
    await one.close();
    await two.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const a = new PseudonymKeys(one);
  const b = new PseudonymKeys(two);
  const first = a.current(now);
  t.equal(first.length, 32);
  t.same(b.current(now + 1000), first, 'another handle reads the same key');
  t.same(a.current(now + PSEUDONYM_KEY_MAX_AGE_MS - 1), first, 'kept until the hour is over');
  const second = b.current(now + PSEUDONYM_KEY_MAX_AGE_MS);
  t.notSame(second, first, 'replaced when an hour old');
  t.same(a.current(now + PSEUDONYM_KEY_MAX_AGE_MS + 1), second, 'and the new one is everybody\'s');
  t.notSame(a.current(now - 10 * 60_000), second, 'a key made in the future (a clock set back) is replaced too');
});
