import t from 'tap';
import { BotMemo, isBotUserAgent } from '../../src/core/user-agent';

t.test('crawlers and link-preview fetchers are bots', async (t) => {
  for (const ua of [
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'Twitterbot/1.0',
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
    'WhatsApp/2.23.20.0',
    'TelegramBot (like TwitterBot)',
    'LinkedInBot/1.0 (compatible; Mozilla/5.0)',
    'Mozilla/5.0 (Macintosh) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0',
    'curl/8.5.0',
    'python-requests/2.31.0',
  ]) t.ok(isBotUserAgent(ua), ua);
});

t.test('browsers and an empty agent are people', async (t) => {
  for (const ua of [
    '',
    'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Edg/126.0',
  ]) t.notOk(isBotUserAgent(ua), ua || '(empty)');
});

t.test('BotMemo answers like isBotUserAgent and stays bounded', async (t) => {
  const memo = new BotMemo(3);
  t.equal(memo.isBot('Googlebot'), true);
  t.equal(memo.isBot('Googlebot'), true);
  t.equal(memo.isBot('Firefox'), false);
  for (let i = 0; i < 10; i++) t.equal(memo.isBot(`Agent ${i}`), false);
  t.equal(memo.isBot('Googlebot'), true);
});
