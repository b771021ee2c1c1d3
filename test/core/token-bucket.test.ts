import t from 'tap';
import { atRest, evaluateRules, peekRules, refill, refundRules, takeFromWindow, takeQuota, takeToken, type LimitRule } from '../../src/core/token-bucket';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0, 0); // 1795348800000
const T0s = T0 / 1000;

t.test('a new bucket starts full and takes one token', async (t) => {
  const d = takeToken(undefined, { capacity: 20, refillPerSecond: 1 / 3 }, T0);
  t.equal(d.allowed, true);
  t.equal(d.limit, 20);
  t.equal(d.remaining, 19);
  t.same(d.next, { tokens: 19, updatedMs: T0 });
  t.equal(d.resetUnix, T0s + 3, 'one token at 1/3 per second refills in 3 s');
  t.equal(d.retryAfterSeconds, 0);
});

t.test('an empty bucket rejects with retry-after rounded up, never 0', async (t) => {
  const spec = { capacity: 10, refillPerSecond: 1 / 6 };
  const d = takeToken({ tokens: 0.5, updatedMs: T0 }, spec, T0);
  t.equal(d.allowed, false);
  t.equal(d.remaining, 0);
  t.equal(d.retryAfterSeconds, 3, '0.5 token missing at 1/6 per s = 3 s');
  t.equal(d.resetUnix, T0s + 57, '9.5 tokens missing = 57 s');
  const fast = takeToken({ tokens: 0.999, updatedMs: T0 }, { capacity: 1000, refillPerSecond: 500 }, T0);
  t.equal(fast.allowed, false);
  t.equal(fast.retryAfterSeconds, 1, 'a 2 µs wait is still reported as 1 s');
});

t.test('refill is continuous and fractional, capped at capacity', async (t) => {
  const spec = { capacity: 5, refillPerSecond: 2 };
  t.equal(refill({ tokens: 0, updatedMs: T0 }, spec, T0 + 250), 0.5);
  t.equal(refill({ tokens: 1.5, updatedMs: T0 }, spec, T0 + 1000), 3.5);
  t.equal(refill({ tokens: 0, updatedMs: T0 }, spec, T0 + 86_400_000), 5, 'long idle refills to capacity, not beyond');
});

t.test('a clock that does not move, or moves back, adds nothing', async (t) => {
  const spec = { capacity: 3, refillPerSecond: 1 };
  let s = takeToken(undefined, spec, T0).next;
  s = takeToken(s, spec, T0).next;
  s = takeToken(s, spec, T0).next;
  t.same(s, { tokens: 0, updatedMs: T0 });
  t.equal(takeToken(s, spec, T0).allowed, false);
  const back = takeToken(s, spec, T0 - 5000);
  t.equal(back.allowed, false);
  t.equal(refill(s, spec, T0 - 5000), 0);
});

t.test('capacity 1 passes one request per refill period', async (t) => {
  const spec = { capacity: 1, refillPerSecond: 0.5 };
  const a = takeToken(undefined, spec, T0);
  t.equal(a.allowed, true);
  t.equal(a.remaining, 0);
  t.equal(a.resetUnix, T0s + 2);
  const b = takeToken(a.next, spec, T0 + 1999);
  t.equal(b.allowed, false);
  t.equal(b.retryAfterSeconds, 1);
  const c = takeToken(a.next, spec, T0 + 2000);
  t.equal(c.allowed, true);
});

t.test('very high rates: a 0.3333/s bucket refills exactly one token in 3.0003 s', async (t) => {
  const spec = { capacity: 20, refillPerSecond: 0.3333 };
  const s = { tokens: 0, updatedMs: T0 };
  t.equal(takeToken(s, spec, T0 + 3000).allowed, false);
  t.equal(takeToken(s, spec, T0 + 3001).allowed, true);
  const hi = { capacity: 1_000_000, refillPerSecond: 1_000_000 };
  const d = takeToken({ tokens: 0, updatedMs: T0 }, hi, T0 + 1);
  t.equal(d.allowed, true);
  t.equal(d.remaining, 999);
});

t.test('daily quota counts per UTC day and resets at midnight', async (t) => {
  const a = takeQuota(undefined, 3, T0);
  t.same({ allowed: a.allowed, remaining: a.remaining, resetUnix: a.resetUnix }, { allowed: true, remaining: 2, resetUnix: Date.UTC(2026, 10, 23) / 1000 });
  const b = takeQuota({ day: a.next.day, count: 3 }, 3, T0);
  t.equal(b.allowed, false);
  t.equal(b.retryAfterSeconds, 12 * 3600);
  const nextDay = takeQuota({ day: a.next.day, count: 3 }, 3, Date.UTC(2026, 10, 23, 0, 0, 0, 1));
  t.equal(nextDay.allowed, true);
  t.equal(nextDay.remaining, 2);
});

t.test('a sliding window lets `limit` through in any span of `windowMs`, however they are spread', async (t) => {
  const spec = { limit: 3, windowMs: 1000 };
  let state = undefined as { times: number[] } | undefined;
  const at = (ms: number) => {
    const d = takeFromWindow(state, spec, T0 + ms);
    if (d.allowed) state = d.next;
    return d;
  };
  const first = at(0);
  t.same(first, { allowed: true, limit: 3, remaining: 2, resetUnix: T0s + 1, retryAfterSeconds: 0, next: { times: [T0] } });
  t.equal(at(400).remaining, 1);
  t.equal(at(900).remaining, 0);
  const full = at(990);
  t.equal(full.allowed, false);
  t.equal(full.retryAfterSeconds, 1, '10 ms until the first leaves, rounded up');
  t.same(full.next, { times: [T0, T0 + 400, T0 + 900] }, 'a refusal records nothing');
  t.equal(full.resetUnix, T0s + 2, 'empty once the last (0.9 s) is a second old: 1.9 s, rounded up');
  // A bucket of 3 refilling 3 a second would have let one more through at 0.4 s and two at 0.99 s.
  t.equal(at(1000).allowed, true, 'at 1.0 s the first has left');
  t.equal(at(1399).allowed, false, 'the one of 0.4 s is still in');
  t.equal(at(1400).allowed, true);
  t.same(state, { times: [T0 + 900, T0 + 1000, T0 + 1400] }, 'only the times inside the window are kept');
  const later = takeFromWindow(state, spec, T0 + 3_000_000);
  t.same(later.next, { times: [T0 + 3_000_000] }, 'an old state is as good as none');
  t.equal(later.remaining, 2);
});

t.test('a sliding window: a clock gone back frees nothing; a smaller limit keeps the newest times', async (t) => {
  const spec = { limit: 2, windowMs: 1000 };
  const full = { times: [T0, T0 + 10] };
  t.equal(takeFromWindow(full, spec, T0 - 5000).allowed, false, 'times after now still count');
  const grown = { times: [T0, T0 + 10, T0 + 20, T0 + 30] };
  const d = takeFromWindow(grown, { limit: 2, windowMs: 1000 }, T0 + 40);
  t.equal(d.allowed, false);
  t.equal(d.retryAfterSeconds, 1);
  t.equal(takeFromWindow(grown, spec, T0 + 1019).allowed, false, 'the newest two (20 and 30 ms) are in');
  t.equal(takeFromWindow(grown, spec, T0 + 1020).allowed, true, 'once the older of them has left');
});

t.test('a sliding window in a composite: peek, refund, at rest', async (t) => {
  const rules: LimitRule[] = [
    { kind: 'bucket', name: 'bucket', capacity: 20, refillPerSecond: 1 / 3 },
    { kind: 'window', name: 'burst', limit: 5, windowMs: 1000 },
  ];
  const states = [{ tokens: 10, updatedMs: T0 }, { times: [T0 - 500, T0 - 100] }];
  const p = peekRules(rules, states, T0);
  t.same([p.limit, p.remaining, p.resetUnix], [5, 3, T0s + 1], 'three left; empty at 0.9 s from now, rounded up');
  const d = evaluateRules(rules, states, T0);
  t.equal(d.binding, 'burst');
  t.equal(d.remaining, 2);
  t.same(d.next[1], { times: [T0 - 500, T0 - 100, T0] });
  t.same(refundRules(rules, d.next, T0)[1], { times: [T0 - 500, T0 - 100] }, 'a refund forgets the newest time');
  t.equal(atRest(rules, [{ tokens: 20, updatedMs: T0 }, { times: [T0 - 500] }], T0), false, 'a time in the window is not at rest');
  t.equal(atRest(rules, [{ tokens: 20, updatedMs: T0 }, { times: [T0 - 1000] }], T0), true, 'a second old: at rest');
});

const SHORTEN: LimitRule[] = [
  { kind: 'bucket', name: 'bucket', capacity: 20, refillPerSecond: 1 / 3 },
  { kind: 'bucket', name: 'burst', capacity: 5, refillPerSecond: 5 },
  { kind: 'daily', name: 'daily', limit: 1000 },
];

t.test('composite: headers describe the binding limit', async (t) => {
  const d = evaluateRules(SHORTEN, [undefined, undefined, undefined], T0);
  t.equal(d.allowed, true);
  t.equal(d.binding, 'burst', 'burst has 4 left, the bucket 19, the quota 999');
  t.equal(d.limit, 5);
  t.equal(d.remaining, 4);
  t.equal(d.resetUnix, T0s + 1);
});

t.test('composite: ties go to the limit that resets last', async (t) => {
  const rules: LimitRule[] = [
    { kind: 'bucket', name: 'a', capacity: 2, refillPerSecond: 1 },
    { kind: 'bucket', name: 'b', capacity: 2, refillPerSecond: 0.1 },
  ];
  const d = evaluateRules(rules, [undefined, undefined], T0);
  t.equal(d.remaining, 1);
  t.equal(d.binding, 'b');
  t.equal(d.resetUnix, T0s + 10);
});

t.test('composite: a rejection consumes from none and waits for every limit', async (t) => {
  const states = [{ tokens: 10, updatedMs: T0 }, { tokens: 0.2, updatedMs: T0 }, { day: Math.floor(T0 / 86_400_000), count: 7 }];
  const d = evaluateRules(SHORTEN, states, T0);
  t.equal(d.allowed, false);
  t.same(d.rejectedBy, ['burst']);
  t.equal(d.retryAfterSeconds, 1);
  t.equal(d.binding, 'burst');
  t.equal(d.remaining, 0);
  t.equal(d.limit, 5);
  const two = evaluateRules(SHORTEN, [{ tokens: 0, updatedMs: T0 }, { tokens: 0, updatedMs: T0 }, states[2]], T0);
  t.same(two.rejectedBy, ['bucket', 'burst']);
  t.equal(two.retryAfterSeconds, 3, 'the slower of the two refills');
  t.equal(two.binding, 'bucket', 'both at 0: the bucket resets last (60 s vs 1 s)');
  t.equal(two.resetUnix, T0s + 60);
});

t.test('peek shows the binding limit without consuming', async (t) => {
  const p = peekRules(SHORTEN, [{ tokens: 3, updatedMs: T0 }, undefined, undefined], T0);
  t.equal(p.remaining, 3);
  t.equal(p.limit, 20);
  t.equal(p.resetUnix, T0s + 51);
});

t.test('refundRules gives one request back to every rule, within its bounds', async (t) => {
  const DAY = 86_400_000;
  const rules: LimitRule[] = [
    { kind: 'bucket', name: 'burst', capacity: 10, refillPerSecond: 0.1 },
    { kind: 'daily', name: 'day', limit: 100 },
  ];
  const today = Math.floor(T0 / DAY);
  // A bucket refills to now, then gets one token; the quota un-counts one of today's requests.
  t.same(refundRules(rules, [{ tokens: 2.5, updatedMs: T0 - 10_000 }, { day: today, count: 7 }], T0), [
    { tokens: 4.5, updatedMs: T0 },
    { day: today, count: 6 },
  ]);
  // Never above capacity, never below zero.
  t.same(refundRules(rules, [{ tokens: 9.8, updatedMs: T0 }, { day: today, count: 0 }], T0), [
    { tokens: 10, updatedMs: T0 },
    { day: today, count: 0 },
  ]);
  // Yesterday's count is already gone from today's quota: nothing to give back.
  t.same(refundRules(rules, [{ tokens: 0, updatedMs: T0 }, { day: today - 1, count: 5 }], T0)[1], { day: today - 1, count: 5 });
  // A rule never used stays untouched (full); a clock that stepped back keeps the later time.
  t.same(refundRules(rules, [undefined, undefined], T0), [undefined, undefined]);
  t.same(refundRules(rules, [{ tokens: 1, updatedMs: T0 + 5000 }, undefined], T0)[0], { tokens: 2, updatedMs: T0 + 5000 });
  // A check, then a refund, leaves the remaining count as it was before the check.
  const before = peekRules(rules, [{ tokens: 3, updatedMs: T0 }, { day: today, count: 10 }], T0);
  const taken = evaluateRules(rules, [{ tokens: 3, updatedMs: T0 }, { day: today, count: 10 }], T0);
  t.equal(taken.remaining, before.remaining - 1);
  t.equal(peekRules(rules, refundRules(rules, taken.next, T0), T0).remaining, before.remaining);
});

t.test('at rest: a record that says no more than a missing one', async (t) => {
  const bucket: LimitRule = { kind: 'bucket', name: 'b', capacity: 5, refillPerSecond: 0.5 };
  const daily: LimitRule = { kind: 'daily', name: 'd', limit: 10 };
  t.equal(atRest([bucket], [undefined], T0), true, 'no state');
  t.equal(atRest([bucket], [{ tokens: 3, updatedMs: T0 }], T0 + 3999), false, 'two tokens short, 4 s to go');
  t.equal(atRest([bucket], [{ tokens: 3, updatedMs: T0 }], T0 + 4000), true, 'refilled to capacity');
  t.equal(atRest([bucket], [{ tokens: 5, updatedMs: T0 + 60_000 }], T0), true, 'full, whatever the clock says');
  const today = Math.floor(T0 / 86_400_000);
  t.equal(atRest([daily], [{ day: today, count: 1 }], T0), false, 'used today');
  t.equal(atRest([daily], [{ day: today, count: 0 }], T0), true, 'counted nothing');
  t.equal(atRest([daily], [{ day: today - 1, count: 10 }], T0), true, 'an earlier day');
  t.equal(atRest([bucket, daily], [{ tokens: 5, updatedMs: T0 }, { day: today, count: 2 }], T0), false, 'every rule must be at rest');
});
