// The comparison behind perch's bot detection (docs/links.md, "Bots"): the hand-written list of
// User-Agent fragments perch used before, against `isbot`, on a fixture of real User-Agent strings
// labelled by what sends them. The one kept (core/user-agent.ts) must be right at least as often,
// and right on every in-app browser (people) and every library, crawler and feed reader (bots).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isBotUserAgent } from '../../src/core/user-agent';

interface Labelled {
  kind: string;
  bot: boolean;
  ua: string;
}

const FIXTURE = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'test', 'fixtures', 'user-agents.json'), 'utf8')) as Labelled[];

/** The fragment list of core/user-agent.ts before isbot replaced it, kept here for the comparison. */
const HAND_WRITTEN = [
  'bot', 'crawler', 'spider', 'slurp', 'crawl',
  'facebookexternalhit', 'facebookcatalog', 'meta-externalagent', 'embedly', 'quora link preview',
  'whatsapp', 'telegrambot', 'slackbot', 'slack-imgproxy', 'discordbot', 'twitterbot', 'linkedinbot',
  'skypeuripreview', 'vkshare', 'pinterest', 'redditbot', 'applebot', 'bingpreview', 'google-inspectiontool',
  'googleother', 'mastodon', 'iframely', 'outbrain', 'nuzzel', 'bitlybot', 'tumblr', 'snapchat', 'viber',
  'headlesschrome', 'lighthouse', 'preview', 'curl/', 'wget/', 'python-requests', 'python-urllib',
  'go-http-client', 'okhttp', 'java/', 'libwww-perl', 'httpclient', 'axios/', 'node-fetch', 'undici',
];

function handWritten(ua: string): boolean {
  if (ua === '') return false;
  const lower = ua.toLowerCase();
  return HAND_WRITTEN.some((f) => lower.includes(f));
}

function score(detect: (ua: string) => boolean): Record<string, [number, number]> {
  const table: Record<string, [number, number]> = {};
  for (const e of FIXTURE) {
    const row = (table[e.kind] ??= [0, 0]);
    row[1]++;
    if (detect(e.ua) === e.bot) row[0]++;
  }
  return table;
}

const total = (table: Record<string, [number, number]>) => Object.values(table).reduce((n, [right]) => n + right, 0);

t.test('the fixture is varied: 100+ real User-Agents of every kind', async (t) => {
  t.ok(FIXTURE.length >= 100, `${FIXTURE.length} entries`);
  t.equal(new Set(FIXTURE.map((e) => e.ua)).size, FIXTURE.length, 'no duplicates');
  t.same(
    Object.fromEntries(Object.entries(score(() => true)).map(([k, [, n]]) => [k, n])),
    { browser: 40, 'in-app': 21, crawler: 27, preview: 23, library: 24, tool: 5, 'feed-reader': 11 },
  );
});

t.test('the comparison table of docs/links.md', async (t) => {
  // [right, of] per kind, for each detector: the figures docs/links.md shows.
  t.same(score(handWritten), {
    browser: [40, 40], 'in-app': [15, 21], crawler: [27, 27], preview: [22, 23], library: [14, 24], tool: [4, 5], 'feed-reader': [0, 11],
  });
  t.same(score(isBotUserAgent), {
    browser: [40, 40], 'in-app': [21, 21], crawler: [27, 27], preview: [23, 23], library: [23, 24], tool: [5, 5], 'feed-reader': [11, 11],
  });
  t.equal(total(score(handWritten)), 122);
  t.equal(total(score(isBotUserAgent)), 150);
  t.ok(total(score(isBotUserAgent)) >= total(score(handWritten)), 'perch keeps the detector that is right more often');
});

t.test('what the kept detector must get right', async (t) => {
  for (const e of FIXTURE.filter((x) => x.kind === 'in-app')) t.equal(isBotUserAgent(e.ua), false, `a person: ${e.ua}`);
  for (const e of FIXTURE.filter((x) => x.kind === 'feed-reader' || x.kind === 'crawler' || x.kind === 'preview')) {
    t.equal(isBotUserAgent(e.ua), true, `a bot: ${e.ua}`);
  }
  for (const ua of ['Python/3.11 aiohttp/3.9.3', 'Scrapy/2.11.1 (+https://scrapy.org)', 'GuzzleHttp/7']) t.equal(isBotUserAgent(ua), true, ua);
  // The one miss: Dart's HTTP client says nothing that marks it as a library.
  t.same(FIXTURE.filter((e) => isBotUserAgent(e.ua) !== e.bot).map((e) => e.ua), ['Dart/3.3 (dart:io)']);
});
