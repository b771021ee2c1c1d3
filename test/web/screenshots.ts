// Screenshots of every screen of the web client at desktop (1280 x 800) and phone (360 x 740)
// width, for docs/screens/ and the README. Run by `npm run screenshots` (scripts/screenshots.js)
// after a build: it boots a real server with a temporary data directory, fills it through the
// API (users, follows, posts with an image, links and clicks), and photographs the real app.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, ElementHandle, Page } from 'puppeteer-core';
import { ROOT, startServer, type Key, type TestServer } from '../helpers/server';
import { DESKTOP, PHONE, launchBrowser, newAppPage, png, setValue, signIn, waitInPage } from './browser';

const OUT = join(ROOT, 'docs', 'screens');

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function must(r: Promise<{ status: number; text: string; json: any }>, what: string): Promise<any> {
  const res = await r;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.json;
}

const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile Safari/537.36',
];

/**
 * Users, follows, posts (one with a picture, with a thread of replies), likes, notifications,
 * links (one with an alias and a password) and clicks, and searches for suggestions: all through
 * the API.
 */
async function fill(server: TestServer): Promise<{ alice: Key; code: string; postId: string }> {
  const [alice, bob, carol] = await Promise.all([server.keygen('alice'), server.keygen('bob'), server.keygen('carol')]);
  await must(server.post('/api/users/@bob/follow', { key: alice.key }), 'follow');
  await must(server.post('/api/users/@carol/follow', { key: alice.key }), 'follow');
  await must(server.post('/api/users/@alice/follow', { key: bob.key }), 'follow');
  const say = (key: Key, text: string, media_ids?: string[]) => must(server.post('/api/posts', { key: key.key, json: { text, media_ids } }), 'post');
  await say(carol, 'Moved my notes over to perch this weekend. One box, one data directory, done.');
  const alicePost = await say(alice, 'Testing the new web client: short links on one side, posts on the other.');
  const dusk = png(480, 270, (x, y) => {
    const sky = y / 270;
    const hill = y > 190 + 30 * Math.sin(x / 60);
    return hill ? [34, 70 + Math.round(20 * sky), 60] : [Math.round(250 - 120 * sky), Math.round(170 - 90 * sky), Math.round(110 + 80 * sky)];
  });
  const media = await must(server.post('/api/media', { key: bob.key, body: dusk, headers: { 'content-type': 'image/png' } }), 'upload');
  const withPicture = await say(bob, 'Evening over the hills from the balcony. Posted from the web client, picture and all.', [media.id]);
  await say(carol, 'Reminder: the short link to the meetup notes expires on Friday.');
  for (const key of [alice, carol]) await must(server.post(`/api/posts/${withPicture.id}/like`, { key: key.key }), 'like');
  const reply = (key: Key, text: string, reply_to: string) => must(server.post('/api/posts', { key: key.key, json: { text, reply_to } }), 'reply');
  const fromAlice = await reply(alice, 'That light! Which hills are those?', withPicture.id);
  await reply(bob, 'The ones behind the station, about twenty minutes up the path.', fromAlice.id);
  await reply(carol, 'Lovely. The station café has the same view from its terrace.', withPicture.id);
  // Notifications for alice: likes of her post, a reply to it, a follow.
  for (const key of [bob, carol]) await must(server.post(`/api/posts/${alicePost.id}/like`, { key: key.key }), 'like');
  await reply(carol, 'The link list looks tidy. Does the chart count bots?', alicePost.id);
  await must(server.post('/api/users/@alice/follow', { key: carol.key }), 'follow');

  const shorten = (url: string, expires_at?: string) => must(server.post('/api/shorten', { key: alice.key, json: { url, expires_at } }), 'shorten');
  await shorten('https://example.org/docs/getting-started/installation');
  await shorten('https://example.com/meetup/2026/notes', new Date(Date.now() + 5 * 86_400_000).toISOString());
  await must(server.post('/api/shorten', { key: alice.key, json: { url: 'https://example.com/members/meetup-photos', alias: 'meetup-photos', password: 'hills and tea' } }), 'shorten');
  const link = await shorten('https://example.net/blog/2026/11/self-hosting-a-link-shortener');
  const referrers = ['news.example', 'news.example', 'news.example', 'social.example', 'social.example', 'mail.example', ''];
  for (const [i, host] of referrers.entries()) {
    const headers: Record<string, string> = { 'user-agent': UAS[i % UAS.length] };
    if (host) headers.referer = `https://${host}/`;
    await fetch(`${server.url}/${link.short_code}`, { redirect: 'manual', headers });
  }
  // Searches, counted for suggestions.
  for (const [q, times] of [['station café', 3], ['station', 2], ['sunset', 1], ['self-hosting', 1]] as const) {
    for (let i = 0; i < times; i++) await must(server.get(`/api/search?q=${encodeURIComponent(q)}`, { key: bob.key }), 'search');
  }
  // Clicks reach the analytics when the queue is drained (every 2 s).
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const d = await must(server.get(`/api/links/${link.short_code}`, { key: alice.key }), 'details');
    const suggested = await must(server.get('/api/suggest?prefix=s'), 'suggest');
    const home = await must(server.get('/api/timeline', { key: alice.key }), 'timeline');
    if (d.clicks.total === referrers.length && suggested.suggestions.length === 4 && home.items.length === 8) break;
    await sleep(500);
  }
  return { alice, code: link.short_code, postId: withPicture.id };
}

async function shoot(page: Page, name: string, size: string): Promise<void> {
  // Let images decode and the chart draw before the picture is taken.
  await waitInPage(page, `[...document.images].every((i) => i.complete)`);
  await sleep(300);
  const file = join(OUT, `${name}-${size}.png`);
  await page.screenshot({ path: file as `${string}.png` });
  process.stdout.write(`wrote ${file}\n`);
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const files = mkdtempSync(join(tmpdir(), 'perch-screens-'));
  const server = await startServer({ threads: 1 });
  let browser: Browser | undefined;
  try {
    const { alice, code, postId } = await fill(server);
    browser = await launchBrowser();
    for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      const context: BrowserContext = await browser.createBrowserContext();
      const { page, problems } = await newAppPage(context as unknown as Browser, viewport);
      await page.goto(server.url + '/');
      await page.waitForSelector('#api-key');
      await shoot(page, 'signin', size);
      await signIn(page, alice.key);
      await waitInPage(page, `document.querySelectorAll('.post-list article').length === 8`);
      await page.type('#compose-text', 'Writing a post: the counter counts like the server does.');
      await shoot(page, 'home', size);
      await setValue(page, '#compose-text', '');

      await page.goto(`${server.url}/#/links`);
      await page.waitForSelector('.link-row');
      await page.type('#shorten-url', 'https://example.com/a/very/long/address/worth/shortening');
      await page.type('#shorten-alias', 'worth-it');
      await shoot(page, 'links', size);

      await page.goto(`${server.url}/#/links/${code}`);
      await page.waitForSelector('.chart canvas');
      await shoot(page, 'link-details', size);
      const clicks = await page.$('#clicks-title');
      await clicks!.evaluate((el: any) => el.scrollIntoView());
      await shoot(page, 'link-chart', size);
      await waitInPage(page, `document.querySelector('img.qr-image')?.complete === true`);
      await (await page.$('#qr-title'))!.evaluate((el: any) => el.scrollIntoView());
      await shoot(page, 'link-qr', size);

      await page.goto(`${server.url}/#/links/meetup-photos`);
      await page.waitForSelector('#edit-remove-password');
      await (await page.$('#edit-title'))!.evaluate((el: any) => el.scrollIntoView());
      await shoot(page, 'link-password', size);
      await page.goto(`${server.url}/#/links/${code}`);
      await waitInPage(page, `document.querySelector('h1').textContent === 'Link ${code}' && document.querySelector('.facts') !== null`);
      // Clicked in the page: the screen renders again as its chart arrives, and a handle taken
      // before that render may be detached by the time puppeteer clicks it.
      await page.waitForSelector('button.danger');
      await page.$eval('button.danger', (b: any) => b.click());
      await page.waitForSelector('dialog[open]');
      await shoot(page, 'link-delete', size);
      await page.keyboard.press('Escape');

      await page.goto(`${server.url}/#/users/bob`);
      await page.waitForSelector('.follow button');
      await waitInPage(page, `document.querySelectorAll('.post-list article').length === 2`);
      await shoot(page, 'profile', size);

      await page.goto(`${server.url}/#/posts/${postId}`);
      await waitInPage(page, `document.querySelector('h1').textContent === 'Post by @bob'`);
      await waitInPage(page, `document.querySelectorAll('.thread-replies article').length === 2`);
      await shoot(page, 'post', size);
      await (await page.$('#replies-title'))!.evaluate((el: any) => el.scrollIntoView());
      await shoot(page, 'thread', size);

      await page.goto(`${server.url}/#/notifications`);
      await waitInPage(page, `document.querySelectorAll('.notification').length === 4 && document.querySelectorAll('.notification .quote').length === 3`);
      await waitInPage(page, `document.querySelector('.live-status')?.dataset.state === 'open'`);
      await shoot(page, 'notifications', size);
      await page.goto(`${server.url}/#/notifications/settings`);
      await page.waitForSelector('.push-state');
      await shoot(page, 'notification-settings', size);

      await page.goto(`${server.url}/#/search?q=station`);
      await waitInPage(page, `document.querySelectorAll('.post-list article').length > 0`);
      await page.focus('#search-input');
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyA');
      await page.keyboard.up('Control');
      await page.keyboard.type('s');
      await waitInPage(page, `document.querySelector('#search-input').getAttribute('aria-expanded') === 'true'`);
      await page.keyboard.press('ArrowDown');
      await shoot(page, 'search', size);
      await page.keyboard.press('Escape');

      const picture = join(files, 'picture.png');
      writeFileSync(picture, png(300, 200, (x, y) => [40 + (x % 50), 90 + (y % 60), 160]));
      await page.goto(`${server.url}/#/`);
      await page.waitForSelector('#compose-media');
      await page.type('#compose-text', 'A picture is attached; it is uploaded when the post is sent.');
      const input = (await page.$('#compose-media')) as ElementHandle<any>;
      await input.uploadFile(picture);
      await page.waitForSelector('.attachments img');
      await shoot(page, 'compose', size);

      if (problems.length) throw new Error(`the page reported problems: ${problems.join('; ')}`);
      await context.close();
    }
  } finally {
    await browser?.close();
    await server.close();
    rmSync(files, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`screenshots failed: ${err instanceof Error ? err.stack : err}\n`);
  process.exit(1);
});
