import t from 'tap';
import { SCORE_EPOCH_MS, addHits, halfLifeMs, rankScore, valueAt, valueOfScore } from '../../src/core/decay';

const H = 1000; // a half-life of one second, in ms
const T0 = SCORE_EPOCH_MS + 1_000_000; // 1000 half-lives after the score epoch

t.test('a count halves every half-life', async (t) => {
  const c = { count: 8, updatedMs: T0 };
  t.equal(valueAt(c, T0, H), 8);
  t.equal(valueAt(c, T0 + H, H), 4);
  t.equal(valueAt(c, T0 + 3 * H, H), 1);
  t.equal(valueAt(c, T0 + H / 2, H), Math.pow(2, 2.5));
  t.equal(halfLifeMs(24), 86_400_000);
});

t.test('hits are worth 1 at their own time, dated at the latest', async (t) => {
  t.same(addHits(null, [T0], H), { count: 1, updatedMs: T0 });
  t.same(addHits(null, [T0, T0, T0], H), { count: 3, updatedMs: T0 });
  t.same(addHits(null, [T0 + H, T0], H), { count: 1.5, updatedMs: T0 + H }, 'the older hit has halved');
  t.same(addHits({ count: 4, updatedMs: T0 }, [T0 + 2 * H], H), { count: 2, updatedMs: T0 + 2 * H });
  t.same(addHits({ count: 4, updatedMs: T0 + H }, [T0], H), { count: 4.5, updatedMs: T0 + H }, 'a late-counted old hit adds its decayed worth');
  t.throws(() => addHits(null, [], H));
});

t.test('the ranking score orders counts as their values do, at any time', async (t) => {
  const old = { count: 1024, updatedMs: T0 };
  const recent = { count: 16, updatedMs: T0 + 7 * H };
  // 1024 · 2^-7 = 8 < 16 at T0 + 7H, and the order never changes after.
  t.ok(rankScore(recent, H) > rankScore(old, H));
  t.equal(rankScore({ count: 8, updatedMs: T0 }, H), 1003);
  t.equal(valueOfScore(rankScore(old, H), T0 + 7 * H, H), 8);
  t.equal(valueOfScore(rankScore(recent, H), T0 + 8 * H, H), 8);
  t.equal(rankScore({ count: 0, updatedMs: T0 }, H), -Infinity);
});

t.test('precision holds years after the epoch with a short half-life', async (t) => {
  const later = Date.UTC(2030, 0, 1);
  const s = rankScore({ count: 3, updatedMs: later }, H);
  t.ok(Math.abs(valueOfScore(s, later + H, H) - 1.5) < 1e-6);
  t.equal(Math.round(valueOfScore(s, later + 2 * H, H) * 4), 3);
});
