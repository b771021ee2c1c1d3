import t from 'tap';
import { BotMemo, FamilyMemo, isBotUserAgent, uaFamilies } from '../../src/core/user-agent';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const EDGE = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Edg/126.0';

t.test('crawlers, link-preview fetchers and HTTP libraries are bots', async (t) => {
  for (const ua of [
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'WhatsApp/2.23.20.0',
    'Mozilla/5.0 (Macintosh) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0',
    'curl/8.5.0',
    'Python/3.11 aiohttp/3.9.3',
    'Scrapy/2.11.1 (+https://scrapy.org)',
    'GuzzleHttp/7',
    'Feedly/1.0 (+http://www.feedly.com/fetcher.html; 3 subscribers; like FeedFetcher-Google)',
  ]) t.ok(isBotUserAgent(ua), ua);
});

t.test('browsers, in-app browsers and an empty agent are people', async (t) => {
  for (const ua of [
    '',
    FIREFOX,
    IPHONE,
    EDGE,
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/12.60.0.46 (like Safari/8617.2.4.10.8, panda)',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [Pinterest/iOS]',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Viber/20.5.1',
  ]) t.notOk(isBotUserAgent(ua), ua || '(empty)');
});

t.test('BotMemo answers like isBotUserAgent and stays bounded', async (t) => {
  const memo = new BotMemo(3);
  t.equal(memo.isBot('Twitterbot/1.0'), true);
  t.equal(memo.isBot('Twitterbot/1.0'), true);
  t.equal(memo.isBot(FIREFOX), false);
  for (let i = 0; i < 10; i++) t.equal(memo.isBot(`${FIREFOX} variant/${i}`), false);
  t.equal(memo.isBot('Twitterbot/1.0'), true);
});

t.test('browser and OS families: one name per family, Other when unknown', async (t) => {
  t.same(uaFamilies(FIREFOX), { browser: 'Firefox', os: 'Linux' });
  t.same(uaFamilies(IPHONE), { browser: 'Safari', os: 'iOS' }, 'Mobile Safari is Safari');
  t.same(uaFamilies(EDGE), { browser: 'Edge', os: 'Windows' });
  t.same(uaFamilies('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15'), { browser: 'Safari', os: 'macOS' });
  t.same(uaFamilies('Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:124.0) Gecko/20100101 Firefox/124.0'), { browser: 'Firefox', os: 'Linux' }, 'distributions are Linux');
  t.same(uaFamilies('Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'), { browser: 'Chrome', os: 'ChromeOS' });
  t.same(uaFamilies('Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36'), { browser: 'Samsung Internet', os: 'Android' });
  t.same(
    uaFamilies('Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A.240405.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/123.0.6312.118 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/457.0.0.38.103;]'),
    { browser: 'Facebook', os: 'Android' },
    'in-app browsers are their app',
  );
  t.same(uaFamilies(''), { browser: 'Other', os: 'Other' });
  t.same(uaFamilies('something else entirely'), { browser: 'Other', os: 'Other' });
  const memo = new FamilyMemo(2);
  t.same(memo.of(FIREFOX), { browser: 'Firefox', os: 'Linux' });
  t.equal(memo.of(FIREFOX), memo.of(FIREFOX), 'memoised');
  t.same(memo.of(IPHONE), { browser: 'Safari', os: 'iOS' });
  t.same(memo.of(EDGE), { browser: 'Edge', os: 'Windows' });
});
