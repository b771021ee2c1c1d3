// Click analytics: clicks and bots counted separately, referrer hosts, browser and OS families,
// daily series, queue lag.
import t from 'tap';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { BROWSER_UA, create, metric, waitFor } from './links-helpers';

const IPHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1';
const SNAPCHAT_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/12.60.0.46 (like Safari/8617.2.4.10.8, panda)';

let server: TestServer;
let alice: Key;

t.before(async () => {
  server = await startServer({ threads: testThreads() });
  alice = await server.keygen('alice');
});
t.teardown(() => server?.close());

t.test('clicks, bots, referrers and the daily series', async (t) => {
  const code = await create(server, alice, 'https://example.com/analytics');
  const hit = (headers: Record<string, string>, method = 'GET') => server.request(method, '/' + code, { headers });
  const people: Array<Record<string, string>> = [
    { 'user-agent': BROWSER_UA, referer: 'https://news.example.org/item?id=1' },
    { 'user-agent': BROWSER_UA, referer: 'https://NEWS.example.org:8443/other' },
    { 'user-agent': BROWSER_UA, referer: 'https://news.example.org/' },
    { 'user-agent': IPHONE_UA, referer: 'http://blog.example.net/post' },
    { 'user-agent': SNAPCHAT_UA },
  ];
  for (const h of people) t.equal((await hit(h)).status, 302);
  const bots: Array<Record<string, string>> = [
    { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', referer: 'https://spam.example/' },
    { 'user-agent': 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)' },
    { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
    { 'user-agent': 'TelegramBot (like TwitterBot)' },
  ];
  for (const h of bots) t.equal((await hit(h)).status, 302);
  t.equal((await hit({ 'user-agent': BROWSER_UA }, 'HEAD')).status, 302, 'HEAD is a bot, whatever the agent says');

  const details = await waitFor('clicks to be aggregated', async () => {
    const r = await server.get(`/api/links/${code}`, { key: alice.key });
    return r.json.clicks.total + r.json.clicks.bots === 10 ? r.json : undefined;
  });
  const c = details.clicks;
  t.equal(c.total, 5, 'people');
  t.equal(c.bots, 5, 'crawlers, link previews and HEAD');
  t.equal(c.last_24h, 5);
  t.same(c.referrers, [
    { referrer: 'news.example.org', count: 3 },
    { referrer: 'blog.example.net', count: 1 },
    { referrer: 'direct', count: 1 },
  ]);
  // Families of people's clicks only, never a bot's; the in-app browser counts as a person.
  t.same(c.browsers, [
    { name: 'Firefox', count: 3 },
    { name: 'Safari', count: 1 },
    { name: 'Snapchat', count: 1 },
  ]);
  t.same(c.os, [
    { name: 'Linux', count: 3 },
    { name: 'iOS', count: 2 },
  ]);
  t.equal(c.daily.length, 30);
  const today = new Date().toISOString().slice(0, 10);
  t.same(c.daily[29], { date: today, count: 5 });
  t.equal(c.daily.reduce((n: number, d: { count: number }) => n + d.count, 0), 5);
  for (let i = 1; i < 30; i++) t.ok(c.daily[i - 1].date < c.daily[i].date, 'oldest first, consecutive');
  const first = new Date(Date.parse(today) - 29 * 86_400_000).toISOString().slice(0, 10);
  t.equal(c.daily[0].date, first);
  t.same(c.daily[0], { date: first, count: 0 }, 'zero days included');

  t.equal(await metric(server, 'perch_click_queue_depth'), 0, 'the queue drained');
  t.type(await metric(server, 'perch_click_queue_lag_seconds'), 'number');
});

t.test('404, 410 and 429 responses are not clicks', async (t) => {
  // An expiry far enough ahead that the creation is answered before it, on a starved machine too.
  const expires = new Date(Date.now() + 2000).toISOString();
  const code = await create(server, alice, 'https://example.com/short-lived', { expires_at: expires });
  await new Promise((r) => setTimeout(r, Date.parse(expires) - Date.now() + 100));
  t.equal((await server.get('/' + code, { headers: { 'user-agent': BROWSER_UA } })).status, 410);
  await new Promise((r) => setTimeout(r, 600));
  const r = await server.get(`/api/links/${code}`, { key: alice.key });
  t.equal(r.json.clicks.total, 0);
  t.equal(r.json.clicks.bots, 0);
});

t.test('the top 10 referrers only', async (t) => {
  const code = await create(server, alice, 'https://example.com/many-referrers');
  for (let i = 0; i < 12; i++) {
    for (let j = 0; j <= i; j++) await server.get('/' + code, { headers: { 'user-agent': BROWSER_UA, referer: `https://r${i}.example/` } });
  }
  const details = await waitFor('clicks', async () => {
    const r = await server.get(`/api/links/${code}`, { key: alice.key });
    return r.json.clicks.total === 78 ? r.json : undefined;
  });
  t.equal(details.clicks.referrers.length, 10);
  t.same(details.clicks.referrers[0], { referrer: 'r11.example', count: 12 });
  t.same(details.clicks.referrers[9], { referrer: 'r2.example', count: 3 });
});

t.test('perch status shows the pool and the click queue', async (t) => {
  const r = await server.cli(['status', '--json']);
  t.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  t.type(s.links.code_pool_size, 'number');
  t.ok(s.links.code_pool_size > 0);
  t.same(Object.keys(s.links.click_queue).sort(), ['depth', 'lag_seconds']);
  t.ok((await metric(server, 'perch_code_pool_size'))! > 0);
});
