import t from 'tap';
import { detectAnomalies, type Creation } from '../../src/core/anomaly';

const th = { maxLinks: 5, windowSeconds: 10, maxSameDomain: 3, domainWindowSeconds: 60 };
const now = 1_000_000;
const c = (userId: string, agoSeconds: number, domain = `d${Math.random()}`): Creation => ({ userId, atMs: now - agoSeconds * 1000, domain });

t.test('many links within the window', async (t) => {
  const burst = [0, 1, 2, 3, 4].map((s) => c('u1', s));
  t.same(detectAnomalies(burst, now, th), [{ userId: 'u1', reason: '5 links within 10 s' }]);
  t.same(detectAnomalies(burst.slice(1), now, th), [], 'four is below the threshold');
  const spread = [0, 3, 6, 9, 12].map((s) => c('u1', s));
  t.same(detectAnomalies(spread, now, th), [], 'the fifth is outside the sliding window');
});

t.test('many links to one registrable domain within the domain window', async (t) => {
  const same = [5, 20, 50].map((s) => c('u2', s, 'bank.co.uk'));
  t.same(detectAnomalies(same, now, th), [{ userId: 'u2', reason: '3 links to bank.co.uk within 60 s' }]);
  const old = [5, 20, 61].map((s) => c('u2', s, 'bank.co.uk'));
  t.same(detectAnomalies(old, now, th), []);
  const mixed = [5, 20, 50].map((s, i) => c('u2', s, i === 2 ? 'other.example' : 'bank.co.uk'));
  t.same(detectAnomalies(mixed, now, th), []);
});

t.test('accounts are judged separately; creations already judged are ignored', async (t) => {
  const creations = [...[0, 1, 2, 3, 4].map((s) => c('a', s)), ...[0, 1].map((s) => c('b', s))];
  t.same(detectAnomalies(creations, now, th).map((v) => v.userId), ['a']);
  t.same(detectAnomalies(creations, now, th, (u) => (u === 'a' ? now - 2500 : -Infinity)), [], 'only 3 of a\'s links are after its clearance');
  t.same(detectAnomalies(creations, now, th, () => Infinity), []);
});
