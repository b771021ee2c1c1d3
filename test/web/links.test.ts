// The web client's sign-in and link screens, driven in headless Chromium against the real server.
import t, { type Test } from 'tap';
import type { Browser, Page } from 'puppeteer-core';
import { startServer, type Key, type TestServer } from '../helpers/server';
import {
  PHONE,
  clickText,
  focusOutline,
  launchBrowser,
  newAppPage,
  overflowsSideways,
  seriousA11yViolations,
  signIn,
  tabTo,
  textOf,
  waitInPage,
  type AppPage,
} from './browser';

let server: TestServer;
let browser: Browser;
let alice: Key;
let app: AppPage;
let page: Page;

t.before(async () => {
  // A small creation bucket, so a test can run it dry and see the 429 explained.
  server = await startServer({ config: { limits: { shorten: { capacity: 3, refill_per_second: 0.01, burst_per_second: 5, daily_quota: 1000 } } } });
  alice = await server.keygen('alice');
  browser = await launchBrowser();
  app = await newAppPage(browser);
  page = app.page;
});
t.teardown(async () => {
  await browser?.close();
  await server?.close();
});

async function noSeriousViolations(t: Test, screen: string): Promise<void> {
  const found = await seriousA11yViolations(page);
  t.same(found, [], `${screen}: no serious or critical accessibility violations`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sets an input's value as typing would (Preact listens to input events). */
async function setValue(selector: string, value: string): Promise<void> {
  await page.waitForSelector(selector);
  await page.$eval(
    selector,
    (el: any, v: string) => {
      el.value = v;
      el.dispatchEvent(new (globalThis as any).Event('input', { bubbles: true }));
    },
    value,
  );
}

t.test('sign in: a wrong key shows the server\'s 401 message; the right one is kept until signing out', async (t) => {
  await page.goto(server.url + '/');
  t.equal(await textOf(page, 'h1'), 'Sign in to perch');
  await noSeriousViolations(t, 'sign in');
  await signIn(page, 'perch_not_a_key');
  t.equal(await textOf(page, '#signin-error'), 'The API key is unknown or revoked.');
  t.equal(await page.$eval('#signin-error', (e: any) => e.getAttribute('role')), 'alert', 'announced at once');
  await noSeriousViolations(t, 'sign in with an error');

  await setValue('#api-key', '');
  await signIn(page, alice.key);
  await page.waitForSelector('nav[aria-label="Main"]');
  t.equal(await textOf(page, 'h1'), 'Home');
  t.equal(await textOf(page, '.who .muted'), '@alice');
  t.equal(await page.evaluate(() => (globalThis as any).localStorage.getItem('perch.api_key')), alice.key, 'the key is kept in the browser');

  await page.reload();
  await page.waitForSelector('nav[aria-label="Main"]');
  t.pass('a reload stays signed in');

  await clickText(page, 'button', 'Sign out');
  await page.waitForSelector('#api-key');
  t.equal(await page.evaluate(() => (globalThis as any).localStorage.getItem('perch.api_key')), null, 'signing out forgets the key');
  await signIn(page, alice.key);
  await page.waitForSelector('nav[aria-label="Main"]');
});

let code = '';

t.test('shorten a link, follow the short URL, and see the click in the chart', async (t) => {
  await page.goto(server.url + '/#/links');
  await page.waitForSelector('#shorten-url');
  t.equal(await textOf(page, 'h1'), 'Links');
  await waitInPage(page, `document.querySelector('.link-list') && document.body.textContent.includes('No links yet')`);
  await noSeriousViolations(t, 'links');

  const target = 'https://example.com/from/the/web-client?x=1';
  await page.type('#shorten-url', target);
  await clickText(page, 'button', 'Shorten');
  const shortUrl = await textOf(page, '.created .short-url');
  code = shortUrl.split('/').pop()!;
  t.match(code, /^[0-9A-Za-z]{7}$/, 'a pool code');
  const details = await server.get(`/api/links/${code}`, { key: alice.key });
  t.equal(details.status, 200);
  t.equal(details.json.url, target, 'the server stored what was typed');
  t.equal(details.json.short_url, shortUrl);
  t.equal(await textOf(page, `.link-row[data-code="${code}"] .link-target`), target, 'the new link heads the list');

  const redirect = await fetch(`${server.url}/${code}`, { redirect: 'manual', headers: { referer: 'https://news.example/item/1', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/143.0 Safari/537.36' } });
  t.equal(redirect.status, 302);
  t.equal(redirect.headers.get('location'), target);

  await page.click(`.link-row[data-code="${code}"] a.code`);
  await waitInPage(page, `location.hash === '#/links/${code}' && document.querySelector('main h1').textContent === 'Link ${code}'`);
  t.pass('the details screen opens');
  await page.waitForSelector('.chart canvas');
  t.pass('uPlot drew the chart (loaded on demand)');

  // Clicks reach the analytics when the queue is drained (every 2 s): refresh until it shows.
  const deadline = Date.now() + 20_000;
  let total = await textOf(page, '.stat-total');
  while (total !== '1' && Date.now() < deadline) {
    await sleep(500);
    await clickText(page, 'button', 'Refresh');
    await waitInPage(page, `[...document.querySelectorAll('button')].some((b) => b.textContent.trim() === 'Refresh')`);
    total = await textOf(page, '.stat-total');
  }
  t.equal(total, '1', 'one click counted');
  await page.waitForSelector('.chart[data-total="1"] canvas');
  t.pass('the chart holds the click');
  const today = new Date().toISOString().slice(0, 10);
  t.equal(await page.$eval(`td[data-date="${today}"]`, (e: any) => e.textContent), '1', "today's bar, in the chart's table");
  t.equal(await page.$$eval('table.daily tbody tr', (rows: any[]) => rows.length), 30, 'thirty days');
  const referrers = await page.$$eval('table.counts tbody tr', (rows: any[]) => rows.map((r) => r.textContent));
  // The referrers' table comes first; the browsers' and systems' tables follow it.
  t.equal(referrers[0], 'news.example1', 'the referrer host and its count');
  await noSeriousViolations(t, 'link details');
});

t.test('edit the target and the expiry, then delete after a confirm', async (t) => {
  const newTarget = 'https://example.org/moved';
  await setValue('#edit-url', newTarget);
  await setValue('#edit-expires', '2031-05-04T10:30');
  const expectedExpiry = await page.evaluate(() => new Date('2031-05-04T10:30').toISOString());
  await clickText(page, 'button', 'Save changes');
  await waitInPage(page, `document.querySelector('.facts dd.break').textContent === ${JSON.stringify(newTarget)}`);
  const saved = await server.get(`/api/links/${code}`, { key: alice.key });
  t.equal(saved.json.url, newTarget);
  t.equal(saved.json.expires_at, expectedExpiry, 'the expiry, in the browser\'s time zone, as UTC');
  const redirect = await fetch(`${server.url}/${code}`, { redirect: 'manual' });
  t.equal(redirect.headers.get('location'), newTarget, 'the short URL leads to the new target');

  await clickText(page, 'button', 'Delete link');
  await page.waitForSelector('dialog[open]');
  t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.closest('dialog') !== null), true, 'focus moved into the dialog');
  await noSeriousViolations(t, 'delete confirmation');
  await clickText(page, 'dialog button', 'Cancel');
  await waitInPage(page, `!document.querySelector('dialog[open]')`);
  t.equal((await server.get(`/api/links/${code}`, { key: alice.key })).status, 200, 'cancel keeps the link');

  await clickText(page, 'button', 'Delete link');
  await page.waitForSelector('dialog[open]');
  await clickText(page, 'dialog button', 'Delete');
  await waitInPage(page, `location.hash === '#/links'`);
  await waitInPage(page, `document.body.textContent.includes('No links yet')`);
  t.equal((await server.get(`/api/links/${code}`, { key: alice.key })).status, 404, 'the link is gone');
  t.equal((await fetch(`${server.url}/${code}`, { redirect: 'manual' })).status, 404, 'and its short URL answers 404');
});

t.test('the keyboard alone: sign in, move between screens, shorten, and open and dismiss the confirm', async (t) => {
  const context = await browser.createBrowserContext();
  t.teardown(() => context.close());
  const kb = await newAppPage(context as unknown as Browser);
  const p = kb.page;
  await p.goto(server.url + '/');
  await p.waitForSelector('#api-key');
  await tabTo(p, '#api-key');
  const outline = await focusOutline(p);
  t.ok(outline.style !== 'none' && outline.width >= 2, `focus is visible (${outline.style} ${outline.width}px)`);
  await p.keyboard.type(alice.key);
  await p.keyboard.press('Enter');
  await p.waitForSelector('nav[aria-label="Main"]');
  await waitInPage(p, `document.activeElement === document.querySelector('main h1')`);
  t.equal(await textOf(p, 'main h1'), 'Home', 'signed in, the focus is on the first screen\'s heading');

  await p.reload();
  await p.waitForSelector('nav[aria-label="Main"]');
  t.equal(await tabTo(p, '.skip-link'), 1, 'from the top, the first stop is the skip link');
  await p.keyboard.press('Enter');
  t.equal(await p.evaluate(() => (globalThis as any).document.activeElement.id), 'main', 'which moves the focus to the main region');
  t.equal(await p.evaluate(() => (globalThis as any).location.hash), '', 'without changing the route');
  await p.evaluate(() => (globalThis as any).document.activeElement.blur());
  await tabTo(p, 'nav a[href="#/links"]');
  t.ok((await focusOutline(p)).style !== 'none', 'a focused link shows it');
  await p.keyboard.press('Enter');
  await waitInPage(p, `location.hash === '#/links' && document.activeElement === document.querySelector('main h1')`);
  t.pass('the new screen\'s heading takes the focus');

  await tabTo(p, '#shorten-url');
  await p.keyboard.type('https://example.com/typed');
  await p.keyboard.press('Enter');
  const shortUrl = await textOf(p, '.created .short-url');
  const code = shortUrl.split('/').pop()!;
  await tabTo(p, `.link-row[data-code="${code}"] a.code`);
  await p.keyboard.press('Enter');
  await p.waitForSelector('.chart');
  const toDelete = await tabTo(p, 'button.danger');
  t.ok(toDelete > 5, 'the delete button comes after the details, in reading order');
  await p.keyboard.press('Enter');
  await p.waitForSelector('dialog[open]');
  t.equal(await p.evaluate(() => (globalThis as any).document.activeElement.textContent.trim()), 'Cancel', 'the safe choice has the focus');
  await p.keyboard.press('Escape');
  await waitInPage(p, `!document.querySelector('dialog[open]')`);
  t.equal(await p.evaluate(() => (globalThis as any).document.activeElement.textContent.trim()), 'Delete link', 'focus returns to the button');
  t.equal((await server.get(`/api/links/${code}`, { key: alice.key })).status, 200, 'Escape deleted nothing');
  t.same(kb.problems, []);
});

t.test("the API's errors are shown as its own sentences, with when to retry", async (t) => {
  await page.goto(server.url + '/#/links');
  await page.waitForSelector('#shorten-url');
  await setValue('#shorten-url', `http://localhost:${server.port}/loop`);
  await clickText(page, 'button', 'Shorten');
  const refused = await textOf(page, '.card .error');
  const answer = await server.post('/api/shorten', { key: alice.key, json: { url: `http://localhost:${server.port}/loop` } });
  t.equal(answer.status, 400);
  t.ok(refused.startsWith(answer.json.message), `the message: ${refused}`);
  t.ok(refused.includes(`url: ${answer.json.details[0].message}`), 'and the field at fault');

  // Spend what is left of the three tokens, then ask again.
  let status = 201;
  for (let i = 0; i < 5 && status === 201; i++) status = (await server.post('/api/shorten', { key: alice.key, json: { url: `https://example.com/${i}` } })).status;
  t.equal(status, 429, 'the bucket is dry');
  await setValue('#shorten-url', 'https://example.com/one-too-many');
  await clickText(page, 'button', 'Shorten');
  await waitInPage(page, `(document.querySelector('.card .error')?.textContent ?? '').includes('Try again in')`);
  t.match(await textOf(page, '.card .error'), /^.+ Try again in \d+ seconds?\.$/, '429 says when to retry');
});

t.test('the phone-width layout', async (t) => {
  const mine = await server.get('/api/links', { key: alice.key });
  const phone = await newAppPage(browser, PHONE);
  t.teardown(() => phone.page.close());
  const p = phone.page;
  await p.goto(server.url + '/#/links');
  await p.waitForSelector('.link-row');
  t.same(await p.$$eval('.link-row', (rows: any[]) => rows.map((r) => r.dataset.code)), mine.json.items.map((l: any) => l.short_code), 'the list as the API has it');
  t.equal(await overflowsSideways(p), false, 'nothing wider than 360 px on the links screen');
  await noSeriousViolationsOn(t, p, 'links at phone width');
  const first = await p.$eval('.link-row', (e: any) => e.dataset.code);
  await p.click('.link-row a.code');
  await p.waitForSelector('.chart canvas');
  t.equal(await overflowsSideways(p), false, `nothing wider than 360 px on ${first}'s details`);
  const chartWidth = await p.$eval('.chart canvas', (c: any) => c.getBoundingClientRect().width);
  t.ok(chartWidth > 200 && chartWidth <= 340, `the chart fits the width (${chartWidth} px)`);
  await noSeriousViolationsOn(t, p, 'link details at phone width');
  t.same(phone.problems, [], 'no script errors or policy violations');
});

t.test('the link list pages through next_cursor as it scrolls', async (t) => {
  // A server of its own, whose creation limits allow more than a page of links at once.
  const roomy = await startServer({ config: { limits: { shorten: { capacity: 100, refill_per_second: 1, burst_per_second: 100, daily_quota: 1000 } } } });
  const context = await browser.createBrowserContext();
  t.teardown(async () => {
    await context.close();
    await roomy.close();
  });
  const dora = await roomy.keygen('dora');
  for (let i = 1; i <= 23; i++) {
    t.equal((await roomy.post('/api/shorten', { key: dora.key, json: { url: `https://example.com/page/${i}` } })).status, 201);
  }
  const listed: string[] = [];
  let cursor: string | null = null;
  do {
    const r: any = await roomy.get(`/api/links?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: dora.key });
    listed.push(...r.json.items.map((l: any) => l.short_code));
    cursor = r.json.next_cursor;
  } while (cursor);
  const tab = await newAppPage(context as unknown as Browser);
  const p = tab.page;
  await p.goto(roomy.url + '/#/links');
  await signIn(p, dora.key);
  await waitInPage(p, `document.querySelectorAll('.link-row').length === 20`);
  await p.evaluate(() => (globalThis as any).window.scrollTo(0, (globalThis as any).document.body.scrollHeight));
  await waitInPage(p, `document.querySelectorAll('.link-row').length === 23`);
  await waitInPage(p, `document.body.textContent.includes('That is all of your links.')`);
  t.same(await p.$$eval('.link-row', (rows: any[]) => rows.map((r) => r.dataset.code)), listed, 'every link once, newest first, as the API lists them');
  t.same(tab.problems, []);
});

t.test('a key revoked while signed in ends the session with the server\'s message', async (t) => {
  const erin = await server.keygen('erin');
  const context = await browser.createBrowserContext();
  t.teardown(() => context.close());
  const tab = await newAppPage(context as unknown as Browser);
  const p = tab.page;
  await p.goto(server.url + '/');
  await signIn(p, erin.key);
  await p.waitForSelector('nav[aria-label="Main"]');
  const revoked = await server.cli(['keys', 'revoke', await server.newestKeyId(erin.user_id)]);
  t.equal(revoked.code, 0);
  await p.click('nav a[href="#/links"]');
  await p.waitForSelector('#api-key');
  t.equal(await textOf(p, '.signin .error'), 'The API key is unknown or revoked.');
  t.equal(await p.evaluate(() => (globalThis as any).localStorage.getItem('perch.api_key')), null, 'the key is forgotten');
  t.same(tab.problems, []);
});

t.test('no script errors or Content-Security-Policy violations on any screen', async (t) => {
  t.same(app.problems, []);
});

async function noSeriousViolationsOn(t: Test, p: Page, screen: string): Promise<void> {
  t.same(await seriousA11yViolations(p), [], `${screen}: no serious or critical accessibility violations`);
}

