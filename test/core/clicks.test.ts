import t from 'tap';
import { aggregateClicks, dailySeries, referrerHost, splitAggregate, utcDay } from '../../src/core/clicks';

t.test('referrerHost', async (t) => {
  t.equal(referrerHost(''), '');
  t.equal(referrerHost('https://news.example.org/item?id=1'), 'news.example.org');
  t.equal(referrerHost('https://NEWS.Example.org:8443/x'), 'news.example.org');
  t.equal(referrerHost('http://user:pw@host.example/path'), 'host.example');
  t.equal(referrerHost('https://host.example?q=a@b'), 'host.example');
  t.equal(referrerHost('https://host.example#frag'), 'host.example');
  t.equal(referrerHost('https://host.example.'), 'host.example');
  t.equal(referrerHost('http://[2001:db8::1]:80/x'), '[2001:db8::1]');
  t.equal(referrerHost('android-app://com.example.app/'), 'com.example.app');
  t.equal(referrerHost('not a url'), '');
  t.equal(referrerHost('://nohost'), '');
});

t.test('aggregateClicks keeps bots apart', async (t) => {
  const day1 = Date.UTC(2026, 10, 21, 23, 59, 30);
  const day2 = Date.UTC(2026, 10, 22, 0, 0, 10);
  const agg = aggregateClicks([
    { code: 'a', atMs: day1, referrer: 'x.example', bot: false },
    { code: 'a', atMs: day1 + 1000, referrer: '', bot: false },
    { code: 'a', atMs: day2, referrer: 'x.example', bot: false },
    { code: 'a', atMs: day2, referrer: 'crawler.example', bot: true },
    { code: 'b', atMs: day2, referrer: '', bot: true },
  ]);
  t.equal(agg.events, 5);
  t.same(agg.daily, [
    { code: 'a', day: '2026-11-21', clicks: 2, bots: 0 },
    { code: 'a', day: '2026-11-22', clicks: 1, bots: 1 },
    { code: 'b', day: '2026-11-22', clicks: 0, bots: 1 },
  ]);
  t.same(agg.referrers, [
    { code: 'a', referrer: 'x.example', clicks: 2 },
    { code: 'a', referrer: 'direct', clicks: 1 },
  ]);
  t.same(agg.minutes.map((m) => [m.code, m.minute, m.clicks]), [
    ['a', Math.floor(day1 / 60000), 2],
    ['a', Math.floor(day2 / 60000), 1],
  ]);
});

t.test('dailySeries: 30 days ending today, oldest first, zeros included', async (t) => {
  const now = Date.UTC(2026, 10, 22, 13, 0, 0);
  const s = dailySeries(new Map([['2026-11-22', 4], ['2026-10-24', 1], ['2026-10-23', 99]]), now);
  t.equal(s.length, 30);
  t.same(s[0], { date: '2026-10-24', count: 1 });
  t.same(s[1], { date: '2026-10-25', count: 0 });
  t.same(s[29], { date: '2026-11-22', count: 4 });
  t.equal(utcDay(now), '2026-11-22');
});

t.test('splitAggregate: parts of at most n links, each link whole in one part, the same way every time', async (t) => {
  const at = Date.UTC(2026, 10, 22, 12, 0, 0);
  const events = ['a', 'b', 'a', 'c', 'd', 'e', 'b'].map((code, i) => ({ code, atMs: at + i * 61_000, referrer: i % 2 ? 'ref.example' : '', bot: i === 5 }));
  const agg = aggregateClicks(events);
  const parts = splitAggregate(agg, 2);
  const codesOf = (p: ReturnType<typeof aggregateClicks>) => [...new Set(p.daily.map((d) => d.code))];
  t.same(parts.map(codesOf), [['a', 'b'], ['c', 'd'], ['e']]);
  t.same(parts.map((p) => p.events), [7, 0, 0], 'the event count goes with the first part');
  for (const kind of ['daily', 'minutes', 'referrers'] as const) {
    t.equal(parts.reduce((n, p) => n + p[kind].length, 0), agg[kind].length, `every ${kind} row in exactly one part`);
    parts.forEach((p, i) => {
      for (const row of p[kind]) t.ok(codesOf(parts[i]).includes(row.code), `${kind} row of ${row.code} with its link`);
    });
  }
  t.same(splitAggregate(aggregateClicks(events), 2).map(codesOf), parts.map(codesOf), 'deterministic');
  t.same(splitAggregate(agg, 1000).map(codesOf), [['a', 'b', 'c', 'd', 'e']]);
  t.same(splitAggregate(aggregateClicks([]), 2), []);
});
