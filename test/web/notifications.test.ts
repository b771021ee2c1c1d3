// The web client's notifications, driven in headless Chromium against the real server: the list
// filled live over /ws as people act, the unread badge, marking read one by one and all at once,
// paging, reconnecting after the server restarts, the settings (types, priority people, muted
// threads), the Web Push opt-in, and the phone-width layout.
import t, { type Test } from 'tap';
import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { allPages } from '../social/helpers';
import {
  PHONE,
  accessibleNames,
  answerLate,
  ariaDisabled,
  clickText,
  focused,
  holdRequests,
  launchBrowser,
  newAppPage,
  reportIfFailed,
  reportOnFailure,
  overflowsSideways,
  pressHolding,
  seriousA11yViolations,
  setValue,
  signIn,
  startServerAtOwnOrigin,
  textOf,
  waitInPage,
  watchWebSockets,
  type AppPage,
} from './browser';

let server: TestServer;
let restarted: TestServer | null = null;
let browser: Browser;
let alice: Key;
let bob: Key;
let carol: Key;
let dave: Key;
let context: BrowserContext;
let tab: AppPage;
let page: Page;
let sockets: { urls: string[]; received: string[] };
let postId = '';

t.before(async () => {
  server = await startServerAtOwnOrigin();
  [alice, bob, carol, dave] = await Promise.all(['alice', 'bob', 'carol', 'dave'].map((h) => server.keygen(h)));
  postId = (await server.post('/api/posts', { key: alice.key, json: { text: 'Notes from the allotment: the beans are up.' } })).json.id;
  browser = await launchBrowser();
  context = await browser.createBrowserContext();
  tab = await newAppPage(context as unknown as Browser);
  page = tab.page;
  sockets = await watchWebSockets(page);
});
t.teardown(async () => {
  await browser?.close();
  if (restarted) {
    await restarted.close();
    rmSync(server.dataDir, { recursive: true, force: true });
  } else {
    await server?.close();
  }
});
t.afterEach((child) => reportIfFailed(child, tab));

/** The server as it is now (a restart replaces it on the same port and data directory). */
function current(): TestServer {
  return restarted ?? server;
}

async function noSeriousViolations(t: Test, p: Page, screen: string): Promise<void> {
  t.same(await seriousA11yViolations(p), [], `${screen}: no serious or critical accessibility violations`);
}

async function ok(r: Promise<{ status: number; text: string }>, what: string): Promise<void> {
  const res = await r;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
}

const rows = (p: Page) => p.$$eval('.notification', (els: any[]) => els.map((e) => ({ id: e.dataset.id, type: e.dataset.type, read: e.classList.contains('read'), text: e.querySelector('.notification-text').textContent.trim().replace(/\s+/g, ' ') })));
/** Waits until the top row's actors and quoted post have answered their lookups ("someone" and "…" are the pending forms). */
const topRowSettled = (p: Page) => waitInPage(p, `!/someone|…/.test(document.querySelector('.notification .notification-text')?.textContent ?? 'someone')`);
const badge = (p: Page) => p.$eval('nav a[data-nav="notifications"]', (a: any) => a.querySelector('.nav-count')?.textContent ?? '');

t.test('the list fills live over /ws: a follow, then a like that a second liker joins', async (t) => {
  await page.goto(server.url + '/#/notifications');
  await signIn(page, alice.key);
  await waitInPage(page, `document.body.textContent.includes('No notifications yet.')`);
  t.equal(await textOf(page, 'h1'), 'Notifications');
  await waitInPage(page, `document.querySelector('.live-status')?.dataset.state === 'open'`);
  t.equal(await textOf(page, '.live-status'), 'Live: new notifications appear here as they happen.');
  t.ok(sockets.urls.some((u) => new URL(u).pathname === '/ws' && new URL(u).searchParams.get('access_token') === alice.key), '/ws with the key as access_token');
  await noSeriousViolations(t, page, 'notifications, empty');

  await ok(server.post('/api/users/@alice/follow', { key: bob.key }), 'follow');
  await waitInPage(page, `document.querySelectorAll('.notification').length === 1`);
  // The row comes with the event; the actor's handle may follow a moment later.
  await waitInPage(page, `document.querySelector('.notification-text').textContent.includes('@bob')`);
  t.same(await rows(page), [{ id: (await rows(page))[0].id, type: 'follow', read: false, text: 'Unread: @bob followed you.' }], 'a follow, unread, without reloading');
  await waitInPage(page, `document.querySelector('nav a[data-nav="notifications"] .nav-count')?.textContent === '1'`);
  t.equal(await textOf(page, '.unread-summary'), '1 unread.');

  await ok(server.post(`/api/posts/${postId}/like`, { key: bob.key }), 'like');
  await waitInPage(page, `document.querySelectorAll('.notification').length === 2 && document.querySelector('.notification').dataset.type === 'like'`);
  await waitInPage(page, `document.querySelector('.notification .quote')?.textContent === '“Notes from the allotment: the beans are up.”'`);
  t.equal((await rows(page))[0].text, 'Unread: @bob liked your post: “Notes from the allotment: the beans are up.”', 'the newest on top, with the post quoted');
  const likeId = (await rows(page))[0].id;
  await ok(server.post(`/api/posts/${postId}/like`, { key: carol.key }), 'like');
  await waitInPage(page, `document.querySelector('.notification').textContent.includes('@carol and @bob liked your post')`);
  const now = await rows(page);
  t.equal(now.length, 2, 'the second liker joins the same notification: still two rows');
  t.equal(now[0].id, likeId, 'the same id, updated in place');
  t.equal(await badge(page), '2');
  const frames = sockets.received.map((f) => JSON.parse(f).data);
  t.same(frames.map((n: any) => [n.type, n.actor_count]), [['follow', 1], ['like', 1], ['like', 2]], 'three messages: the like came again with its new actor');
  t.same(frames.map((n: any) => n.id), [now[1].id, likeId, likeId]);
  const listed = await server.get('/api/notifications', { key: alice.key });
  t.same(listed.json.items.map((n: any) => n.id), now.map((r) => r.id), 'the screen shows what the API lists, in its order');
  await noSeriousViolations(t, page, 'notifications, live');
  t.equal(await page.title(), '(2) Notifications · perch');
});


t.test('mark one read, then all; a read notification that gains an actor is unread again', async (t) => {
  const before = await rows(page);
  const follow = before.find((r) => r.type === 'follow')!;
  const markOne = `.notification[data-id="${follow.id}"] button`;
  t.same(
    await accessibleNames(page, '.notification button'),
    ['Mark as read @carol and @bob liked your post: “Notes from the allotment: the beans are up.”', 'Mark as read @bob followed you.'],
    'each Mark as read is named after its notification',
  );
  // From the keyboard, with the request held on its way: the button keeps the focus meanwhile (a
  // disabled one would drop it to the page) and ignores a second press.
  const reads = await pressHolding(page, markOne, 'POST', /^\/api\/notifications\/\d+\/read$/);
  t.equal(await ariaDisabled(page, markOne), 'true', 'busy while its request runs');
  t.equal(await focused(page, markOne), true, 'and keeps the focus meanwhile');
  await page.keyboard.press('Enter');
  await reads.release();
  await waitInPage(page, `document.querySelector('.notification[data-id="${follow.id}"]').classList.contains('read')`);
  t.equal(reads.seen(), 1, 'the second press sent nothing');
  t.equal(await page.$(markOne), null, 'no button on a read one');
  t.equal(await focused(page, `.notification[data-id="${follow.id}"]`), true, 'the focus moves from the button that went to its row');
  await waitInPage(page, `document.querySelector('nav a[data-nav="notifications"] .nav-count')?.textContent === '1'`);
  const listed = await server.get('/api/notifications', { key: alice.key });
  t.equal(listed.json.items.find((n: any) => n.id === follow.id).read, true, 'read on the server');

  const markAll = '.screen .row button';
  t.equal(await textOf(page, markAll), 'Mark all as read');
  const readAll = await pressHolding(page, markAll, 'POST', /^\/api\/notifications\/read-all$/);
  t.equal(await ariaDisabled(page, markAll), 'true', 'Mark all as read: busy while its request runs');
  t.equal(await focused(page, markAll), true, 'and keeps the focus meanwhile');
  await readAll.release();
  await waitInPage(page, `[...document.querySelectorAll('.notification')].every((e) => e.classList.contains('read'))`);
  await waitInPage(page, `!document.querySelector('nav a[data-nav="notifications"] .nav-count') && document.querySelector('.unread-summary')?.textContent.trim() === 'Nothing unread.'`);
  t.equal(await textOf(page, '.unread-summary'), 'Nothing unread.');
  t.equal(await ariaDisabled(page, markAll), 'true', 'nothing left to mark');
  t.equal(await focused(page, markAll), true, 'the focus is still on the button');
  t.equal(readAll.seen(), 1, 'one request');
  t.equal((await server.get('/api/me', { key: alice.key })).json.unread_notifications, 0, 'none unread on the server');
  t.equal(await page.title(), 'Notifications · perch');

  const like = before.find((r) => r.type === 'like')!;
  await ok(server.post(`/api/posts/${postId}/like`, { key: dave.key }), 'like');
  await waitInPage(page, `document.querySelector('.notification[data-id="${like.id}"]').classList.contains('unread')`);
  // The row turns unread with the event; the new actor's handle may follow a moment later.
  await topRowSettled(page);
  t.equal((await rows(page))[0].text, 'Unread: @dave and 2 others liked your post: “Notes from the allotment: the beans are up.”');
  await waitInPage(page, `document.querySelector('nav a[data-nav="notifications"] .nav-count')?.textContent === '1'`);
  t.pass('counted unread again');
});

t.test('older notifications page in as the list scrolls', async (t) => {
  // Likes of 22 different posts: 22 notifications of their own.
  const ids: string[] = [];
  for (let i = 1; i <= 22; i++) ids.push((await server.post('/api/posts', { key: alice.key, json: { text: `Allotment diary, day ${i}` } })).json.id);
  for (const id of ids) await ok(server.post(`/api/posts/${id}/like`, { key: carol.key }), 'like');
  await waitInPage(page, `document.querySelectorAll('.notification').length === 24`);
  t.pass('all 22 arrived live');
  await page.reload();
  // At least the first page: the next may already have been fetched if the list's end was in view.
  await waitInPage(page, `document.querySelectorAll('.notification').length >= 20`);
  await page.evaluate(() => (globalThis as any).window.scrollTo(0, (globalThis as any).document.body.scrollHeight));
  await waitInPage(page, `document.querySelectorAll('.notification').length === 24`);
  await waitInPage(page, `document.body.textContent.includes('That is every notification.')`);
  const all: string[] = (await allPages(server, '/api/notifications?limit=100', alice.key)).items.map((n: any) => n.id);
  t.same((await rows(page)).map((r) => r.id), all, 'every notification once, latest activity first');
});

t.test('when the server restarts, the page reconnects and misses nothing', async (t) => {
  const socketsBefore = sockets.urls.length;
  t.equal(await server.stop('SIGTERM'), 0, 'the server stopped');
  // Read in the page while it waits: its retry timer turns it to 'connecting' for each attempt.
  await waitInPage(
    page,
    `(() => { const s = document.querySelector('.live-status'); return s?.dataset.state === 'waiting' && /^Live updates are interrupted; trying again in \\d+ s\\.$/.test(s.textContent.trim().replace(/\\s+/g, ' ')); })()`,
  );
  t.pass('the page says live updates are interrupted, and when it tries again');
  // The screen opened again while perch is down: its list cannot be read.
  await page.evaluate(() => ((globalThis as any).location.hash = '#/'));
  await page.waitForSelector('h1');
  await page.evaluate(() => ((globalThis as any).location.hash = '#/notifications'));
  await waitInPage(page, `document.querySelector('.screen .error')?.textContent.includes('Could not reach perch')`);
  restarted = await startServer({ dataDir: server.dataDir, port: server.port, config: { server: { public_origin: server.url } } });
  // Whether the page is back before this reply or after, it must show it: live, or from the
  // first page it reads again once reconnected.
  await ok(restarted.post('/api/posts', { key: bob.key, json: { text: 'Mine too!', reply_to: postId } }), 'reply');
  await waitInPage(page, `document.querySelector('.live-status')?.dataset.state === 'open'`, 30_000);
  t.ok(sockets.urls.length > socketsBefore, 'a new socket');
  await waitInPage(page, `!document.querySelector('.screen .error') && document.querySelectorAll('.notification').length >= 20`);
  t.pass('reconnected, the list is read again and its error is gone');
  await waitInPage(page, `document.querySelector('.notification')?.dataset.type === 'reply'`);
  await topRowSettled(page);
  t.equal((await rows(page))[0].text, 'Unread: @bob replied to your post: “Notes from the allotment: the beans are up.”');
  const ids = (await rows(page)).map((r) => r.id);
  t.equal(new Set(ids).size, ids.length, 'no notification twice');
  await ok(restarted.post('/api/users/@alice/follow', { key: carol.key }), 'follow');
  await waitInPage(page, `document.querySelector('.notification')?.textContent.includes('@carol and @bob followed you')`);
  t.pass('and live again afterwards');
});

t.test('settings: kinds, priority people and muted threads, saved as one object', async (t) => {
  await page.goto(current().url + '/#/notifications/settings');
  await page.waitForSelector('#type-follow');
  t.equal(await textOf(page, 'h1'), 'Notification settings');
  await noSeriousViolations(t, page, 'notification settings');
  await page.click('#type-follow');
  await page.type('#priority-handle', '@nobody');
  await clickText(page, 'button', 'Add');
  t.equal(await textOf(page, '#priority-error'), '@nobody: No such user.');
  // Oneself: refused at once (the server would refuse it too), whatever the case typed.
  await setValue(page, '#priority-handle', '');
  await page.type('#priority-handle', '@Alice');
  await clickText(page, 'button', 'Add');
  await waitInPage(page, `document.querySelector('#priority-error')?.textContent.startsWith('@Alice') || document.querySelector('.pref-list .handle')`);
  t.same(await page.$$eval('.pref-list .handle', (els: any[]) => els.map((e) => e.textContent)), [], 'not listed');
  t.equal(await page.evaluate(() => (globalThis as any).document.querySelector('#priority-error')?.textContent ?? null), '@Alice: that is you; your own actions never notify you.', 'and why');
  await setValue(page, '#priority-handle', '');
  await page.type('#priority-handle', 'Carol');
  await page.keyboard.press('Enter');
  await waitInPage(page, `[...document.querySelectorAll('.pref-list .handle')].some((a) => a.textContent === '@carol')`);
  const save = 'form button[type="submit"]';
  t.equal(await textOf(page, save), 'Save settings');
  const puts = await pressHolding(page, save, 'PUT', /^\/api\/notifications\/preferences$/);
  t.equal(await ariaDisabled(page, save), 'true', 'Save settings: busy while its request runs');
  t.equal(await textOf(page, save), 'Saving…');
  t.equal(await focused(page, save), true, 'and keeps the focus meanwhile');
  await page.keyboard.press('Enter');
  await puts.release();
  await waitInPage(page, `!document.body.textContent.includes('Unsaved changes')`);
  t.equal(puts.seen(), 1, 'the second press sent nothing');
  t.equal(await focused(page, save), true, 'the focus is still on the button once saved');
  t.equal(await ariaDisabled(page, save), null, 'which works again');
  const saved = await current().get('/api/notifications/preferences', { key: alice.key });
  t.same(saved.json, { muted_post_ids: [], priority_user_ids: [carol.user_id], types: { like: true, reply: true, follow: false } }, 'stored as set');

  // Muting a thread from its post's page keeps the rest.
  await page.goto(`${current().url}/#/posts/${postId}`);
  await page.waitForSelector('.mute-thread button');
  t.equal(await page.$eval('.mute-thread button', (b: any) => b.getAttribute('aria-pressed')), 'false');
  await page.click('.mute-thread button');
  await waitInPage(page, `document.querySelector('.mute-thread button').getAttribute('aria-pressed') === 'true'`);
  const muted = await current().get('/api/notifications/preferences', { key: alice.key });
  t.same(muted.json, { muted_post_ids: [postId], priority_user_ids: [carol.user_id], types: { like: true, reply: true, follow: false } }, 'muted, nothing else changed');
  await noSeriousViolations(t, page, 'a post with its thread muted');

  await page.goto(current().url + '/#/notifications/settings');
  await waitInPage(page, `document.querySelector('.pref-list a[href="#/posts/${postId}"]') !== null`);
  t.equal(await page.$eval('#type-follow', (e: any) => e.checked), false, 'the settings as stored');
  await page.click(`.pref-list a[href="#/posts/${postId}"] + button`);
  await page.click('#type-follow');
  await clickText(page, 'button', 'Save settings');
  await waitInPage(page, `!document.body.textContent.includes('Unsaved changes') && document.body.textContent.includes('No muted threads.')`);
  const back = await current().get('/api/notifications/preferences', { key: alice.key });
  t.same(back.json, { muted_post_ids: [], priority_user_ids: [carol.user_id], types: { like: true, reply: true, follow: true } });
});

t.test('a muted post deleted since does not stop the settings from saving', async (t) => {
  // GET leaves out muted posts deleted since, so sending back what it answered succeeds.
  const doomed = (await current().post('/api/posts', { key: alice.key, json: { text: 'A thread to mute, then delete.' } })).json.id;
  await ok(current().request('PUT', '/api/notifications/preferences', { key: alice.key, json: { muted_post_ids: [doomed, postId], priority_user_ids: [carol.user_id] } }), 'mute');
  await ok(current().request('DELETE', `/api/posts/${doomed}`, { key: alice.key }), 'delete');
  const stored = await current().get('/api/notifications/preferences', { key: alice.key });
  t.same(stored.json.muted_post_ids, [postId], 'the deleted post is left out');
  t.equal((await current().request('PUT', '/api/notifications/preferences', { key: alice.key, json: stored.json })).status, 200, 'what GET answered is accepted back');

  // The page is on the settings already: a reload has it read the preferences again. The form
  // waits for the people and posts it lists (their lookups held here): shown before them, it
  // would list none, and a save would send the lists empty.
  const lookups = await holdRequests(page, 'GET', /^\/api\/users\/\d+$/);
  await page.reload();
  await lookups.waitForHeld();
  await waitInPage(page, `document.querySelector('#prefs-title') || document.querySelector('.screen > [role="status"]')`);
  t.equal(await page.$('#prefs-title'), null, 'no form to save while the lists are being read');
  t.equal(await textOf(page, '.screen > [role="status"]'), 'Loading…', 'but its place says it is loading');
  await lookups.release();
  await waitInPage(page, `document.querySelectorAll('.pref-list[aria-labelledby="muted-title"] li').length === 1`);
  t.same(await page.$$eval('.pref-list[aria-labelledby="priority-title"] .handle', (els: any[]) => els.map((e) => e.textContent)), ['@carol'], 'shown with the form at once');
  t.notMatch(await textOf(page, '.pref-list[aria-labelledby="muted-title"]'), /a deleted post/, 'only the live post is listed');
  await page.click('#type-reply');
  await clickText(page, 'button', 'Save settings');
  await waitInPage(page, `!document.body.textContent.includes('Unsaved changes')`);
  const saved = await current().get('/api/notifications/preferences', { key: alice.key });
  t.same(saved.json, { muted_post_ids: [postId], priority_user_ids: [carol.user_id], types: { like: true, reply: false, follow: true } }, 'saved');
  t.equal(await page.$('.error'), null, 'no error');
  await ok(current().request('PUT', '/api/notifications/preferences', { key: alice.key, json: { priority_user_ids: [carol.user_id] } }), 'reset');
});

t.test('push notifications: the service worker is registered for the whole origin; a refusal is explained', async (t) => {
  // Headless Chromium has no push service and shows no notifications, so subscribing cannot
  // succeed here; what can be checked is the worker's registration and how a refusal reads.
  await context.overridePermissions(current().url, ['notifications']);
  await page.goto(current().url + '/#/notifications/settings');
  await page.waitForSelector('.push-state');
  t.match(await textOf(page, '.push-state'), /^Off in this browser\./);
  await clickText(page, 'button', 'Turn on push notifications');
  await page.waitForSelector('#push-title ~ .error');
  const message = await textOf(page, '#push-title ~ .error');
  t.match(message, /^The browser refused to subscribe to push messages: .+/, `readable: ${message}`);
  t.equal(await focused(page, '#push-title ~ .actions button'), true, 'the button kept the focus through its attempt');
  const reg = await page.evaluate(async () => {
    const r = await (globalThis as any).navigator.serviceWorker.getRegistration('/');
    return r ? { scope: r.scope, script: r.active?.scriptURL ?? null } : null;
  });
  t.same(reg, { scope: current().url + '/', script: current().url + '/app/sw.js' }, 'the worker is active with the scope /');
  t.same((await current().get('/api/push/subscriptions', { key: alice.key })).json.items, [], 'nothing was sent to the server');
  t.match(await textOf(page, '.push-state'), /^Off in this browser\./, 'and push is still off');
  await noSeriousViolations(t, page, 'push settings with a refusal');
});

t.test('a notification that arrives live while the first page is on its way stays when that page arrives', async (t) => {
  const erin = await current().keygen('erin');
  const erinPost = (await current().post('/api/posts', { key: erin.key, json: { text: 'A first page made before this like.' } })).json.id;
  const own = await browser.createBrowserContext();
  t.teardown(() => own.close());
  const erinTab = await newAppPage(own as unknown as Browser);
  reportOnFailure(t, erinTab);
  const p = erinTab.page;
  const frames = await watchWebSockets(p);
  await p.goto(current().url + '/#/notifications');
  // The first page is made now, with no notification yet, and delivered after the like below
  // has arrived over /ws: the page that replaces the list must not take the like out of it.
  const late = await answerLate(p, 'GET', /^\/api\/notifications$/);
  await signIn(p, erin.key);
  await late.fetched;
  await waitInPage(p, `document.querySelector('.live-status')?.dataset.state === 'open'`);
  await ok(current().post(`/api/posts/${erinPost}/like`, { key: bob.key }), 'like');
  const deadline = Date.now() + 20_000;
  while (!frames.received.some((f) => JSON.parse(f).data?.type === 'like') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.ok(frames.received.some((f) => JSON.parse(f).data?.type === 'like'), 'the like arrived over /ws before the page');
  await late.release();
  await waitInPage(p, `document.querySelectorAll('.notification').length === 1 && !!document.querySelector('.more') && !document.querySelector('.more [role="status"]')`);
  t.same((await rows(p)).map((r) => r.type), ['like'], 'the like is listed once');
  const listed = await current().get('/api/notifications', { key: erin.key });
  t.same((await rows(p)).map((r) => r.id), listed.json.items.map((n: any) => n.id), 'as the API lists it');
  t.same(erinTab.problems, []);
});

t.test('the phone-width layout', async (t) => {
  const phone = await newAppPage(context as unknown as Browser, PHONE);
  t.teardown(() => phone.page.close());
  reportOnFailure(t, phone);
  const p = phone.page;
  await p.goto(current().url + '/#/notifications');
  await waitInPage(p, `document.querySelectorAll('.notification').length >= 20`);
  t.equal(await overflowsSideways(p), false, 'notifications: nothing wider than 360 px');
  const nav = await p.$eval('nav[aria-label="Main"]', (n: any) => n.getBoundingClientRect().right);
  t.ok(nav <= 360, 'the navigation with its badge fits');
  await noSeriousViolations(t, p, 'notifications at phone width');
  await p.goto(current().url + '/#/notifications/settings');
  await p.waitForSelector('#type-like');
  t.equal(await overflowsSideways(p), false, 'settings: nothing wider than 360 px');
  await noSeriousViolations(t, p, 'settings at phone width');
  await p.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  await p.goto(current().url + '/#/notifications');
  await waitInPage(p, `document.querySelectorAll('.notification.unread').length > 0`);
  await noSeriousViolations(t, p, 'notifications in the dark scheme, unread rows included');
  t.same(phone.problems, []);
});

t.test('no script errors or Content-Security-Policy violations', async (t) => {
  t.same(tab.problems, []);
});
