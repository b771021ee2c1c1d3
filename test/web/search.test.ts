// The web client's search, driven in headless Chromium against the real server: suggestions while
// typing in a combobox chosen with the keyboard, results newest first and by best match, paging,
// the 429 of a spent tier explained with when to retry, and the phone-width layout.
import t, { type Test } from 'tap';
import type { Browser, Page } from 'puppeteer-core';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { allPages } from '../social/helpers';
import {
  PHONE,
  answerOnce,
  launchBrowser,
  newAppPage,
  reportIfFailed,
  reportOnFailure,
  overflowsSideways,
  seriousA11yViolations,
  setValue,
  signIn,
  textOf,
  waitInPage,
  type AppPage,
} from './browser';

let server: TestServer;
let browser: Browser;
let alice: Key;
let tab: AppPage;
let page: Page;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Asks until `check` holds (bounded): indexing and query counting run in the background. */
async function eventually(what: string, check: () => Promise<boolean>, timeout = 20_000): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeout} ms`);
    await sleep(250);
  }
}

const search = (q: string, sort = 'recent', extra = '') => server.get(`/api/search?q=${encodeURIComponent(q)}&sort=${sort}${extra}`, { key: alice.key });

t.before(async () => {
  // A small relevance bucket, so that a test can spend it and see the 429 explained; a large
  // plain one, so that waiting for the index (many searches when the machine is slow) never
  // spends what the page's own searches need.
  server = await startServer({
    config: { limits: { search: { recent: { capacity: 10000, refill_per_second: 100 }, relevance: { capacity: 20, refill_per_second: 0.01 } } } },
  });
  alice = await server.keygen('alice');
  const say = async (text: string) => {
    const r = await server.post('/api/posts', { key: alice.key, json: { text } });
    if (r.status !== 201) throw new Error(`post: ${r.status} ${r.text}`);
  };
  await say('Coffee at the station café, again');
  await say('Station works: the café is closed');
  for (let i = 1; i <= 23; i++) await say(`Allotment tea break number ${i}`);
  await say('Tea on the train');
  // Searchable within seconds; each answered search is also counted for suggestions.
  await eventually('posts indexed', async () => (await search('tea')).json.items.length === 20 && (await search('café')).json.items.length === 2);
  for (let i = 0; i < 3; i++) await search('Café  Station');
  await eventually('suggestions counted', async () => {
    const r = await server.get('/api/suggest?prefix=caf');
    return r.json.suggestions.some((s: any) => s.query === 'café station');
  });
  browser = await launchBrowser();
  tab = await newAppPage(browser);
  page = tab.page;
});
t.teardown(async () => {
  await browser?.close();
  await server?.close();
});
t.afterEach((child) => reportIfFailed(child, tab));

async function noSeriousViolations(t: Test, p: Page, screen: string): Promise<void> {
  t.same(await seriousA11yViolations(p), [], `${screen}: no serious or critical accessibility violations`);
}

const resultIds = (p: Page) => p.$$eval('.post-list article', (els: any[]) => els.map((e) => e.dataset.postId));
const expanded = (p: Page) => p.$eval('#search-input', (e: any) => e.getAttribute('aria-expanded'));

t.test('suggestions while typing, chosen with the keyboard, run the search', async (t) => {
  await page.goto(server.url + '/');
  await signIn(page, alice.key);
  await page.waitForSelector('nav a[data-nav="search"]');
  await page.click('nav a[data-nav="search"]');
  await page.waitForSelector('#search-input');
  t.equal(await textOf(page, 'h1'), 'Search');
  t.equal(await page.$eval('#search-input', (e: any) => e.getAttribute('role')), 'combobox');
  t.match(await textOf(page, '#search-hint'), /Suggestions come from what people searched, yours too, and anyone may see them/, 'the box says that searches become public suggestions');
  await noSeriousViolations(t, page, 'search, empty');

  await page.focus('#search-input');
  await page.keyboard.type('caf');
  await waitInPage(page, `document.querySelector('#search-input').getAttribute('aria-expanded') === 'true'`);
  const expected = (await server.get('/api/suggest?prefix=caf&limit=8')).json.suggestions.map((s: any) => s.query);
  t.same(await page.$$eval('#search-suggestions [role="option"]', (els: any[]) => els.map((e) => e.textContent)), expected, 'the suggestions the API has for the prefix, in its order');
  t.equal(expected[0], 'café station', 'the most searched first');
  t.equal(await page.$eval('#search-input', (e: any) => e.getAttribute('aria-activedescendant')), null, 'none chosen yet');
  await noSeriousViolations(t, page, 'search with the suggestion list open');

  await page.keyboard.press('ArrowDown');
  t.equal(await page.$eval('#search-input', (e: any) => e.getAttribute('aria-activedescendant')), 'suggestion-0');
  t.equal(await page.$eval('#suggestion-0', (e: any) => e.getAttribute('aria-selected')), 'true');
  await page.keyboard.press('ArrowUp');
  t.equal(await page.$eval('#search-input', (e: any) => e.getAttribute('aria-activedescendant')), `suggestion-${expected.length - 1}`, 'up from the first wraps to the last');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Escape');
  t.equal(await expanded(page), 'false', 'Escape closes the list');
  t.equal(await page.$eval('#search-input', (e: any) => e.value), 'caf', 'and keeps what was typed');
  await page.keyboard.press('ArrowDown');
  t.equal(await expanded(page), 'true', 'the arrow opens it again');
  await page.keyboard.press('Enter');

  await waitInPage(page, `location.hash === '#/search?q=caf%C3%A9+station&sort=recent'`);
  t.equal(await page.$eval('#search-input', (e: any) => e.value), 'café station', 'the suggestion fills the box');
  t.equal(await expanded(page), 'false');
  t.equal(await page.evaluate(() => (globalThis as any).document.activeElement.id), 'search-input', 'the focus stays in the box');
  await waitInPage(page, `document.querySelectorAll('.post-list article').length === 2`);
  t.same(await resultIds(page), (await search('café station')).json.items.map((p: any) => p.id), 'the results the API gives, newest first');
  t.equal(await textOf(page, '#results-title'), 'Results for “café station”');
  await waitInPage(page, `document.querySelector('[aria-live="polite"]').textContent === '2 results for “café station”.'`);
  t.pass('the count is announced');
  await noSeriousViolations(t, page, 'search results');
});

t.test('best match first, by the radio buttons', async (t) => {
  await page.click('#sort-relevance');
  await waitInPage(page, `location.hash === '#/search?q=caf%C3%A9+station&sort=relevance'`);
  const expected: string[] = (await search('café station', 'relevance')).json.items.map((p: any) => p.id);
  // The page shows the API's ranking once its answer is in (the order is checked in the page,
  // where it is read in one go).
  await waitInPage(page, `!document.querySelector('.more [role="status"]') && [...document.querySelectorAll('.post-list article')].map((e) => e.dataset.postId).join() === ${JSON.stringify(expected.join())}`);
  t.equal(expected.length, 2, 'both posts that have both words');
  t.pass('the API\'s relevance order');
  t.equal(await page.$eval('#sort-relevance', (e: any) => e.checked), true);
});

t.test('a spent tier answers 429, shown with when to try again', async (t) => {
  let status = 200;
  for (let i = 0; i < 30 && status === 200; i++) status = (await search('tea', 'relevance')).status;
  t.equal(status, 429, 'the relevance bucket is dry');
  await setValue(page, '#search-input', '');
  await page.type('#search-input', 'tea train');
  await page.keyboard.press('Enter');
  await waitInPage(page, `(document.querySelector('.more .error')?.textContent ?? '').includes('Try again in')`);
  // The relevance tier refills one search every 6 s: the wait is seconds, or about a minute or two.
  t.match(await textOf(page, '.more .error'), /^.+ Try again in (\d+ seconds?|about \d+ minutes)\.$/, 'the message says when');
  t.equal(await page.$eval('.more .error', (e: any) => e.getAttribute('role')), 'alert');
  t.equal(await textOf(page, '.more button.secondary'), 'Try again', 'and offers to try again');
  await noSeriousViolations(t, page, 'search refused with 429');
});

t.test('results page in as they scroll', async (t) => {
  await page.click('#sort-recent');
  await waitInPage(page, `location.hash === '#/search?q=tea+train&sort=recent'`);
  await waitInPage(page, `document.querySelectorAll('.post-list article').length === 1`);
  // Typing a query is the suggestions test's; here the address alone starts the search.
  await page.evaluate(() => ((globalThis as any).location.hash = '#/search?q=tea&sort=recent'));
  // At least the first page: the next may follow at once if the list's end is still in view.
  await waitInPage(page, `document.querySelector('#search-input').value === 'tea' && document.querySelectorAll('.post-list article').length >= 20`);
  await page.evaluate(() => (globalThis as any).window.scrollTo(0, (globalThis as any).document.body.scrollHeight));
  await waitInPage(page, `document.querySelectorAll('.post-list article').length === 24`);
  await waitInPage(page, `document.body.textContent.includes('No more results.')`);
  const all: string[] = (await allPages(server, '/api/search?q=tea&sort=recent&limit=100', alice.key)).items.map((p: any) => p.id);
  t.same(await resultIds(page), all, 'every match once, newest first');
  t.equal(all.length, 24);
});

t.test('a refused query (400) is explained, without a "Try again" that would be refused again', async (t) => {
  // More distinct words than the server takes in one query.
  const q = Array.from({ length: 33 }, (_, i) => `word${i}`).join(' ');
  const answer = await search(q);
  t.equal(answer.status, 400, 'the API refuses it');
  await page.evaluate((hash: string) => ((globalThis as any).location.hash = hash), `#/search?q=${encodeURIComponent(q)}&sort=recent`);
  await waitInPage(page, `!document.querySelector('.more [role="status"]') && !!document.querySelector('.more .error')`);
  t.ok((await textOf(page, '.more .error')).startsWith(answer.json.message), "the server's sentence");
  t.same(await page.$$eval('.more button', (bs: any[]) => bs.map((b) => b.textContent.trim())), [], 'no button: asking again would get the same answer');
  await noSeriousViolations(t, page, 'search refused with 400');
});

t.test("a 500 is explained with its request id, and offers to try again", async (t) => {
  // The server cannot be made to fail on demand: this one answer is the contract's 500, whose
  // message need not hold the id (a proxy's, or another perch version's).
  const failure = await answerOnce(page, 'GET', /^\/api\/search$/, {
    status: 500,
    headers: { 'X-Request-Id': '7-abc123' },
    json: { error: 'internal', message: 'Something went wrong on our side.', request_id: '7-abc123' },
  });
  await page.evaluate(() => ((globalThis as any).location.hash = '#/search?q=station&sort=recent'));
  await failure.answered;
  await waitInPage(page, `!document.querySelector('.more [role="status"]') && !!document.querySelector('.more .error')`);
  t.equal(await textOf(page, '.more .error'), 'Something went wrong on our side (request id 7-abc123).', 'the id to quote in a report');
  t.equal(await textOf(page, '.more button'), 'Try again', 'a failure on the server may pass');
  await page.click('.more button');
  await waitInPage(page, `document.querySelectorAll('.post-list article').length === 2`);
  t.same(await resultIds(page), (await search('station')).json.items.map((p: any) => p.id), 'asked again, the results');
  t.equal(await page.$('.more .error'), null, 'and the error is gone');
});

t.test('the phone-width layout', async (t) => {
  const phone = await newAppPage(browser, PHONE);
  t.teardown(() => phone.page.close());
  reportOnFailure(t, phone);
  const p = phone.page;
  await p.goto(server.url + '/#/search?q=caf%C3%A9');
  await waitInPage(p, `document.querySelectorAll('.post-list article').length === 2`);
  await p.focus('#search-input');
  await p.keyboard.press('End');
  await p.keyboard.type(' s');
  await waitInPage(p, `document.querySelector('#search-input').getAttribute('aria-expanded') === 'true'`);
  t.equal(await overflowsSideways(p), false, 'nothing wider than 360 px, the list open');
  const list = await p.$eval('#search-suggestions', (e: any) => e.getBoundingClientRect().toJSON());
  t.ok(list.left >= 0 && list.right <= 360, 'the suggestions fit the width');
  // The open list must leave the Search button in sight and pressable.
  const button = await p.$eval('.search-row button[type="submit"]', (e: any) => e.getBoundingClientRect().toJSON());
  const overlap = button.left < list.right && list.left < button.right && button.top < list.bottom && list.top < button.bottom;
  t.equal(overlap, false, `the list does not cover the Search button (list ${JSON.stringify(list)}, button ${JSON.stringify(button)})`);
  t.ok(button.right <= 360 && button.bottom <= 740, 'the button is on the screen');
  t.equal(
    await p.evaluate((x: number, y: number) => (globalThis as any).document.elementFromPoint(x, y)?.textContent.trim(), button.left + button.width / 2, button.top + button.height / 2),
    'Search',
    'what is at its place is the button',
  );
  await noSeriousViolations(t, p, 'search at phone width');
  await p.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  await p.keyboard.press('ArrowDown');
  await noSeriousViolations(t, p, 'search in the dark scheme, a suggestion chosen');
  t.same(phone.problems, []);
});

t.test('no script errors or Content-Security-Policy violations', async (t) => {
  t.same(tab.problems, []);
});
