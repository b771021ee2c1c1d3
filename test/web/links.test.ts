// The web client's sign-in and link screens, driven in headless Chromium against the real server.
import t, { type Test } from 'tap';
import type { Browser, Page } from 'puppeteer-core';
import { startServer, type Key, type TestServer } from '../helpers/server';
import {
  PHONE,
  clickText,
  launchBrowser,
  newAppPage,
  overflowsSideways,
  seriousA11yViolations,
  signIn,
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
  await waitInPage(page, `location.hash === '#/links/${code}'`);
  t.equal(await textOf(page, 'h1'), `Link ${code}`);
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
  t.same(referrers, ['news.example1'], 'the referrer host and its count');
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

t.test("the API's errors are shown as its own sentences, with when to retry", async (t) => {
  await page.goto(server.url + '/#/links');
  await page.waitForSelector('#shorten-url');
  await setValue('#shorten-url', 'http://localhost:8080/loop');
  await clickText(page, 'button', 'Shorten');
  const refused = await textOf(page, '.card .error');
  const answer = await server.post('/api/shorten', { key: alice.key, json: { url: 'http://localhost:8080/loop' } });
  t.equal(answer.status, 400);
  t.ok(refused.startsWith(answer.json.message), `the message: ${refused}`);
  t.ok(refused.includes(`url: ${answer.json.details[0].message}`), 'and the field at fault');

  // Two of the three tokens are left (one went to the first link); spend them, then ask again.
  for (let i = 0; i < 2; i++) t.equal((await server.post('/api/shorten', { key: alice.key, json: { url: `https://example.com/${i}` } })).status, 201);
  await setValue('#shorten-url', 'https://example.com/one-too-many');
  await clickText(page, 'button', 'Shorten');
  await waitInPage(page, `(document.querySelector('.card .error')?.textContent ?? '').includes('Try again in')`);
  t.match(await textOf(page, '.card .error'), /^.+ Try again in \d+ seconds?\.$/, '429 says when to retry');
});

t.test('paging through the link list, and the phone-width layout', async (t) => {
  // The list holds the two links made through the API above; more than a page of them needs
  // more tokens than this server gives, so the page size is what is checked here.
  const phone = await newAppPage(browser, PHONE);
  t.teardown(() => phone.page.close());
  const p = phone.page;
  await p.goto(server.url + '/#/links');
  await p.waitForSelector('.link-row');
  t.equal(await p.$$eval('.link-row', (rows: any[]) => rows.length), 2);
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

t.test('no script errors or Content-Security-Policy violations on any screen', async (t) => {
  t.same(app.problems, []);
});

async function noSeriousViolationsOn(t: Test, p: Page, screen: string): Promise<void> {
  t.same(await seriousA11yViolations(p), [], `${screen}: no serious or critical accessibility violations`);
}

