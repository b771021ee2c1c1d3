// The web client's microblog screens, driven in headless Chromium against the real server: a post
// with an image reaching a follower, likes and the author's live notification, reply threads and
// deleting a reply, follow and unfollow, the counter, endless scrolling and the phone-width layout.
import t, { type Test } from 'tap';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, ElementHandle, Page } from 'puppeteer-core';
import { startServer, type Key, type TestServer } from '../helpers/server';
import {
  PHONE,
  accessibleNames,
  ariaDisabled,
  clickText,
  focused,
  launchBrowser,
  newAppPage,
  reportIfFailed,
  overflowsSideways,
  seriousA11yViolations,
  setValue,
  signIn,
  solidPng,
  textOf,
  waitInPage,
  watchWebSockets,
  type AppPage,
} from './browser';
import { eventually } from '../social/helpers';
import { metric } from '../notifications/helpers';

let server: TestServer;
let browser: Browser;
let alice: Key;
let bob: Key;
let carol: Key;
const contexts: BrowserContext[] = [];
const pages: AppPage[] = [];
const files = mkdtempSync(join(tmpdir(), 'perch-web-files-'));

t.before(async () => {
  server = await startServer();
  [alice, bob, carol] = await Promise.all([server.keygen('alice'), server.keygen('bob'), server.keygen('carol')]);
  browser = await launchBrowser();
});
t.teardown(async () => {
  await browser?.close();
  await server?.close();
  rmSync(files, { recursive: true, force: true });
});
t.afterEach(async (child) => {
  for (const app of pages) await reportIfFailed(child, app);
});

let aliceSockets: { urls: string[]; received: string[] } | null = null;

/** A signed-in tab of its own browser context (its own localStorage: one person each). */
async function personPage(key: Key, viewport?: Parameters<typeof newAppPage>[1], watch?: (p: Page) => Promise<void>): Promise<Page> {
  const context = await browser.createBrowserContext();
  contexts.push(context);
  const app = await newAppPage(context as unknown as Browser, viewport);
  pages.push(app);
  await watch?.(app.page);
  await app.page.goto(server.url + '/');
  await signIn(app.page, key.key);
  await app.page.waitForSelector('nav[aria-label="Main"]');
  return app.page;
}

async function noSeriousViolations(t: Test, page: Page, screen: string): Promise<void> {
  t.same(await seriousA11yViolations(page), [], `${screen}: no serious or critical accessibility violations`);
}

async function articleTexts(page: Page): Promise<string[]> {
  return page.$$eval('.post-list article .post-text', (els: any[]) => els.map((e) => e.textContent));
}

t.test('a first load offers every screen at once, asking the server nothing that fails and logging no error', async (t) => {
  const context = await browser.createBrowserContext();
  contexts.push(context);
  const app = await newAppPage(context as unknown as Browser);
  pages.push(app);
  const errors: string[] = [];
  const failed: string[] = [];
  app.page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  app.page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  await app.page.goto(server.url + '/');
  await signIn(app.page, carol.key);
  await app.page.waitForSelector('nav[aria-label="Main"] a[data-nav="notifications"]');
  const items = await app.page.$$eval('nav[aria-label="Main"] a[data-nav]', (els: any[]) => els.map((e) => e.getAttribute('data-nav')));
  t.ok(items.includes('search') && items.includes('notifications'), `the optional screens are offered (${items.join(', ')})`);
  await app.page.waitForSelector('.post-list, .empty, main');
  t.same(failed, [], 'no request answered with an error');
  t.same(errors, [], 'no console error');
  t.same(app.problems, []);
  await context.close();
});

let alicePage: Page;
let bobPage: Page;
let postId = '';
const POST_TEXT = 'Hello from the web client, with a picture. Café ☕';

t.test('a follower follows from the profile; a post with an image reaches their timeline', async (t) => {
  bobPage = await personPage(bob);
  await bobPage.goto(server.url + '/#/users/alice');
  await bobPage.waitForSelector('.follow button');
  t.equal(await textOf(bobPage, 'h1'), '@alice');
  t.same(await bobPage.$$eval('.profile-counts a', (els: any[]) => els.map((e) => e.textContent)), ['0 followers', '0 following']);
  await noSeriousViolations(t, bobPage, 'profile');
  await clickText(bobPage, '.follow button', 'Follow @alice');
  await waitInPage(bobPage, `document.querySelector('.follow button')?.textContent.trim() === 'Unfollow @alice'`);
  await waitInPage(bobPage, `document.querySelector('.profile-counts').textContent.includes('1 follower')`);
  const aliceRecord = await server.get('/api/users/@alice');
  t.equal(aliceRecord.json.followers_count, 1, 'the server counts the follow');

  await bobPage.click('nav[aria-label="Main"] a[href="#/"]');
  await waitInPage(bobPage, `document.body.textContent.includes('Nothing here yet')`);

  // The follow's notification is made and delivered in the background (pool tasks, whose thread
  // may have to start): both are done before alice's page opens, so that it reaches her as a
  // count, not over her socket.
  await eventually("bob's follow in alice's notifications", 15_000, async () =>
    (await server.get('/api/me', { key: alice.key })).json.unread_notifications === 1 ? true : undefined,
  );
  await eventually("bob's follow delivered", 15_000, async () => ((await metric(server, 'perch_notification_delivery_lag_events')) === 0 ? true : undefined));
  alicePage = await personPage(alice, undefined, async (p) => {
    aliceSockets = await watchWebSockets(p);
  });
  // Typing waits for the app to settle (its capability probe answered, the timeline read), as a
  // person would see the page before typing.
  await waitInPage(alicePage, `document.querySelector('nav[aria-label="Main"] a[href="#/search"]') !== null && document.body.textContent.includes('Nothing here yet')`);
  const png = join(files, 'square.png');
  writeFileSync(png, solidPng(40, 30, [30, 120, 200]));
  await alicePage.type('#compose-text', POST_TEXT);
  t.equal(await textOf(alicePage, '#compose-count'), `${280 - [...POST_TEXT.normalize('NFC')].length} characters left`);
  const input = (await alicePage.$('#compose-media')) as ElementHandle<any>;
  await input.uploadFile(png);
  await alicePage.waitForSelector('.attachments img');
  t.match(await alicePage.$eval('.attachments img', (i: any) => i.src), /^blob:/, 'a preview of the picked file');
  await noSeriousViolations(t, alicePage, 'compose with an image');
  await alicePage.focus('.compose button[type="submit"]');
  await alicePage.keyboard.press('Enter');
  await waitInPage(alicePage, `document.querySelector('.post-list article .post-text')?.textContent === ${JSON.stringify(POST_TEXT)}`);
  t.equal(await alicePage.$eval('#compose-text', (e: any) => e.value), '', 'the form is cleared');
  // Nothing to post now: the button says so (aria-disabled) and keeps the focus it was pressed with.
  t.equal(await ariaDisabled(alicePage, '.compose button[type="submit"]'), 'true', 'not postable when empty');
  t.equal(await focused(alicePage, '.compose button[type="submit"]'), true, 'the focus stayed on Post');
  // Greyed by its colours, not faded: its focus outline is as strong as any other's.
  t.same(
    await alicePage.$eval('.compose button[type="submit"]', (b: any) => {
      const cs = (globalThis as any).getComputedStyle(b);
      return [cs.opacity, cs.outlineStyle, cs.outlineWidth];
    }),
    ['1', 'solid', '3px'],
    'the unavailable button shows its focus at full strength',
  );

  const posts = await server.get('/api/users/@alice/posts');
  t.equal(posts.json.items.length, 1);
  const post = posts.json.items[0];
  postId = post.id;
  t.equal(post.text, POST_TEXT);
  t.equal(post.media_ids.length, 1, 'posted with the uploaded image');
  const media = await fetch(`${server.url}/media/${post.media_ids[0]}`);
  t.equal(media.headers.get('content-type'), 'image/png');
  t.same(Buffer.from(await media.arrayBuffer()), solidPng(40, 30, [30, 120, 200]), 'the bytes of the file');

  // The follower's open timeline polls its first page and offers the new post.
  await bobPage.waitForSelector('button.new-posts', { timeout: 15_000 });
  t.equal(await textOf(bobPage, 'button.new-posts'), 'Show 1 new post');
  t.notMatch(await textOf(bobPage, 'main'), /Nothing here yet/, 'an empty list does not say there is nothing beside the button');
  t.match(await textOf(bobPage, 'main'), /New posts have arrived: show them with the button above\./);
  await bobPage.click('button.new-posts');
  await waitInPage(bobPage, `document.querySelectorAll('.post-list article').length === 1`);
  t.same(await articleTexts(bobPage), [POST_TEXT]);
  t.equal(await textOf(bobPage, '.post-list article .handle'), '@alice');
  await waitInPage(bobPage, `[...document.querySelectorAll('.post-media img')].every((i) => i.complete && i.naturalWidth === 40)`);
  t.pass('the image is shown, decoded at its size');
  t.same(await bobPage.$eval('.post-media img', (i: any) => [i.clientWidth, i.clientHeight]), [40, 30], 'at its natural size, not stretched to the column');
  await waitInPage(bobPage, `document.activeElement === document.querySelector('.post-list article')`);
  t.pass('the focus is on the new post');
  await noSeriousViolations(t, bobPage, 'home timeline');

  // Two more, above the one shown: they go on top, and the newest takes the focus.
  const more = [];
  for (const text of ['Second light.', 'Third light.']) more.push((await server.post('/api/posts', { key: alice.key, json: { text } })).json);
  await waitInPage(bobPage, `document.querySelector('button.new-posts')?.textContent.trim() === 'Show 2 new posts'`, 15_000);
  await bobPage.click('button.new-posts');
  await waitInPage(bobPage, `document.activeElement?.dataset?.postId === ${JSON.stringify(more[1].id)}`);
  t.same(await articleTexts(bobPage), ['Third light.', 'Second light.', POST_TEXT], 'on top, newest first');

  // Alice posts, then Bob posts from his page before its poll has seen hers: his own post goes on
  // top at once, and hers, older, is still offered, then shown below his.
  more.push((await server.post('/api/posts', { key: alice.key, json: { text: 'Fourth light.' } })).json);
  await bobPage.type('#compose-text', 'Bob meanwhile.');
  await bobPage.click('.compose button[type="submit"]');
  await waitInPage(bobPage, `document.querySelector('.post-list article .post-text')?.textContent.trim() === 'Bob meanwhile.'`);
  await waitInPage(bobPage, `document.querySelector('button.new-posts')?.textContent.trim() === 'Show 1 new post'`, 15_000);
  t.pass("others' posts made before one's own are still offered");
  await bobPage.click('button.new-posts');
  await waitInPage(bobPage, `document.querySelectorAll('.post-list article').length === 5`);
  t.same(await articleTexts(bobPage), ['Bob meanwhile.', 'Fourth light.', 'Third light.', 'Second light.', POST_TEXT], 'each once, newest first');
  const bobs = (await server.get('/api/users/@bob/posts')).json.items;
  for (const p of bobs) t.equal((await server.request('DELETE', `/api/posts/${p.id}`, { key: bob.key })).status, 204);
  for (const p of more) t.equal((await server.request('DELETE', `/api/posts/${p.id}`, { key: alice.key })).status, 204);
});

t.test("likes toggle, with the count read back from the server; the author's open page hears of it live", async (t) => {
  // alice's home timeline is open (the test above), with her socket to /ws.
  // bob's follow (the test above) made one before her page opened: it is counted from GET /api/me.
  await waitInPage(alicePage, `document.querySelector('nav a[data-nav="notifications"] .nav-count')?.textContent === '1'`);
  t.pass("bob's follow is counted as unread");
  t.ok(aliceSockets!.urls.some((u) => new URL(u).pathname === '/ws' && new URL(u).searchParams.get('access_token') === alice.key), "the page opened /ws with its key as access_token");
  const like = `.post-list article[data-post-id="${postId}"] button.like`;
  await bobPage.click(like);
  await waitInPage(bobPage, `document.querySelector('${like}').getAttribute('aria-pressed') === 'true' && document.querySelector('${like}').parentElement.textContent.includes('1 like')`);
  t.equal((await server.get(`/api/posts/${postId}`)).json.like_count, 1);

  // The like reaches alice's open page over the socket: the badge counts it and it is announced.
  await waitInPage(alicePage, `document.querySelector('nav a[data-nav="notifications"] .nav-count')?.textContent === '2'`);
  t.equal(await textOf(alicePage, 'nav a[data-nav="notifications"]'), 'Notifications2, 2 unread', 'the badge, and its words for screen readers');
  await waitInPage(alicePage, `document.querySelector('[aria-live="polite"]').textContent === 'New notification: @bob liked your post.'`);
  t.pass('announced politely');
  await waitInPage(alicePage, `document.querySelector('.post-list article[data-post-id="${postId}"] .post-actions')?.textContent.includes('1 like')`);
  t.pass("the liked post's count on the author's page follows, without a reload");
  const frames = aliceSockets!.received.map((f) => JSON.parse(f));
  t.equal(frames.length, 1, 'one message on the socket (the follow came before the page opened)');
  t.equal(frames[0].type, 'notification');
  t.equal(frames[0].data.type, 'like');
  t.equal(frames[0].data.post_id, postId);
  t.same(frames[0].data.actor_ids, [bob.user_id]);
  t.equal(await alicePage.title(), '(2) Home · perch', 'the title counts them too');
  // From the keyboard: the button keeps the focus through its request (a disabled one drops it).
  await bobPage.focus(like);
  await bobPage.keyboard.press('Enter');
  await waitInPage(bobPage, `document.querySelector('${like}').getAttribute('aria-pressed') === 'false' && document.querySelector('${like}').parentElement.textContent.includes('0 likes')`);
  t.equal(await bobPage.evaluate((sel: string) => (globalThis as any).document.activeElement === (globalThis as any).document.querySelector(sel), like), true, 'the focus stayed on Like');
  t.equal((await server.get(`/api/posts/${postId}`)).json.like_count, 0);
  await bobPage.click(like);
  await waitInPage(bobPage, `document.querySelector('${like}').getAttribute('aria-pressed') === 'true'`);
  t.equal((await server.get(`/api/posts/${postId}`)).json.like_count, 1);
  t.equal((await server.get('/api/me', { key: alice.key })).json.unread_notifications, 2, 'liking again after an unlike refreshes the unread row it is in: still two unread');

  // The post's own page, reached from its time.
  await bobPage.click(`.post-list article[data-post-id="${postId}"] a.post-time`);
  await waitInPage(bobPage, `location.hash === '#/posts/${postId}'`);
  await waitInPage(bobPage, `document.querySelector('h1').textContent === 'Post by @alice'`);
  t.equal(await bobPage.$eval('article button.like', (b: any) => b.getAttribute('aria-pressed')), 'true', 'the like is remembered');
  t.match(await textOf(bobPage, 'article .post-actions'), /1 like/);
  await noSeriousViolations(t, bobPage, 'post page');
});

t.test("a reply from the post's page joins its thread, and deleting one's own post", async (t) => {
  // bob is on alice's post's page (the test above). Reply there goes to the form below.
  await bobPage.waitForSelector('#compose-text');
  const [replyName] = await accessibleNames(bobPage, '.focus-post article button.reply');
  t.match(replyName, /^Reply to @alice's post “.+”$/, 'named after the post it answers');
  await bobPage.focus('.focus-post article button.reply');
  await bobPage.keyboard.press('Enter');
  t.equal(await bobPage.evaluate(() => (globalThis as any).document.activeElement?.id), 'compose-text', 'Reply puts the focus in the reply form');
  await waitInPage(bobPage, `document.body.textContent.includes('No replies yet.')`);
  t.equal(await textOf(bobPage, 'label[for="compose-text"]'), 'Your reply');
  await bobPage.type('#compose-text', 'Lovely light in that one.');
  await clickText(bobPage, '.compose button', 'Reply');
  await waitInPage(bobPage, `document.querySelectorAll('.thread-replies article').length === 1 && document.querySelector('.focus-post .post-actions').textContent.includes('1 reply')`);
  t.equal(await textOf(bobPage, '#replies-title'), '1 reply');
  t.equal(await textOf(bobPage, '.thread-replies article .post-text'), 'Lovely light in that one.', 'the reply is in the thread');
  await waitInPage(bobPage, `document.querySelector('[aria-live="polite"]').textContent === 'Reply posted; it is the last in the thread.'`);
  t.pass('announced as where the reply went');
  const parent = await server.get(`/api/posts/${postId}`);
  t.equal(parent.json.reply_count, 1, 'the server counts the reply');
  const bobs = await server.get('/api/users/@bob/posts');
  const reply = bobs.json.items[0];
  t.equal(reply.text, 'Lovely light in that one.');
  t.equal(reply.reply_to, postId, 'posted as a reply to that post');
  await noSeriousViolations(t, bobPage, 'post page with a reply');
  await waitInPage(alicePage, `document.querySelector('nav a[data-nav="notifications"] .nav-count')?.textContent === '3'`);
  t.pass("the reply reaches the author's open page live too");

  // In a list, Reply is a link to the post's page, where the form is.
  await bobPage.goto(server.url + '/#/users/alice');
  await bobPage.waitForSelector(`article[data-post-id="${postId}"] a.reply`);
  t.equal(await bobPage.$eval(`article[data-post-id="${postId}"] a.reply`, (a: any) => a.getAttribute('href')), `#/posts/${postId}`);

  await bobPage.goto(server.url + '/#/users/bob');
  await bobPage.waitForSelector(`article[data-post-id="${reply.id}"]`);
  t.equal(await bobPage.$eval(`article[data-post-id="${reply.id}"] .reply-to a`, (a: any) => a.getAttribute('href')), `#/posts/${postId}`, 'a reply links to its post');
  t.equal(await bobPage.$(`article[data-post-id="${postId}"] .delete-post`), null, "no Delete on another's post");
  await bobPage.click(`article[data-post-id="${reply.id}"] .delete-post`);
  await bobPage.waitForSelector('dialog[open]');
  await noSeriousViolations(t, bobPage, 'delete a post');
  await clickText(bobPage, 'dialog[open] button', 'Delete');
  await waitInPage(bobPage, `!document.querySelector('article[data-post-id="${reply.id}"]')`);
  t.equal((await server.get(`/api/posts/${reply.id}`)).status, 404, 'the post is gone');
  t.equal((await server.get(`/api/posts/${postId}`)).json.reply_count, 0, 'and no longer counted as a reply');

  // Deleted from the thread itself: the count on the page follows the server's.
  const again = await server.post('/api/posts', { key: bob.key, json: { text: 'A second look.', reply_to: postId } });
  t.equal(again.status, 201);
  await bobPage.goto(server.url + `/#/posts/${postId}`);
  await waitInPage(bobPage, `document.querySelectorAll('.thread-replies article').length === 1`);
  t.equal(await textOf(bobPage, '#replies-title'), '1 reply');
  await bobPage.click(`.thread-replies article[data-post-id="${again.json.id}"] .delete-post`);
  await bobPage.waitForSelector('dialog[open]');
  await clickText(bobPage, 'dialog[open] button', 'Delete');
  await waitInPage(bobPage, `document.querySelectorAll('.thread-replies article').length === 0 && document.querySelector('#replies-title').textContent === 'Replies'`);
  t.notMatch(await textOf(bobPage, '.focus-post .post-actions'), /1 reply/, "the post's count follows the deletion");
});

t.test('the counter counts as the server does: code points after NFC', async (t) => {
  // 279 letters and an e with a combining acute: 281 UTF-16 units, 280 code points after NFC.
  const atLimit = 'a'.repeat(279) + 'e\u0301';
  await setValue(alicePage, '#compose-text', atLimit);
  t.equal(await textOf(alicePage, '#compose-count'), '0 characters left');
  t.equal(await ariaDisabled(alicePage, '.compose button[type="submit"]'), null, 'postable');
  t.equal((await server.post('/api/posts', { key: carol.key, json: { text: atLimit } })).status, 201, 'and the server takes it');

  const over = atLimit + '😀';
  await setValue(alicePage, '#compose-text', over);
  t.equal(await textOf(alicePage, '#compose-count'), '1 character over the limit');
  t.equal(await ariaDisabled(alicePage, '.compose button[type="submit"]'), 'true', 'not postable');
  t.equal(await alicePage.$eval('#compose-text', (e: any) => e.getAttribute('aria-invalid')), 'true');
  t.equal((await server.post('/api/posts', { key: carol.key, json: { text: over } })).status, 400, 'the server refuses it too');
  const postsBefore = (await server.get(`/api/users/${alice.user_id}/posts?limit=100`)).json.items.length;
  await alicePage.click('.compose button[type="submit"]');
  await alicePage.waitForSelector('#compose-text-problem');
  t.equal(await textOf(alicePage, '#compose-text-problem'), 'Shorten the text by 1 character: a post holds at most 280.', 'Post pressed anyway says why');
  await setValue(alicePage, '#compose-text', atLimit);
  await waitInPage(alicePage, `!document.querySelector('#compose-text-problem')`);
  t.pass('and the message goes once the text changes');
  await setValue(alicePage, '#compose-text', '');
  await alicePage.click('.compose button[type="submit"]');
  await alicePage.waitForSelector('#compose-text-problem');
  t.equal(await textOf(alicePage, '#compose-text-problem'), 'Write something first: a post needs text.');
  t.equal((await server.get(`/api/users/${alice.user_id}/posts?limit=100`)).json.items.length, postsBefore, 'nothing was posted');

  await setValue(alicePage, '#compose-text', ' \u3000\n');
  t.equal(await ariaDisabled(alicePage, '.compose button[type="submit"]'), 'true', 'white space only is not postable');
  await setValue(alicePage, '#compose-text', '\u3164\u2800');
  t.equal(await ariaDisabled(alicePage, '.compose button[type="submit"]'), 'true', 'nor characters that show nothing');
  t.equal((await server.post('/api/posts', { key: carol.key, json: { text: ' \u3000\n' } })).status, 400);
  await setValue(alicePage, '#compose-text', '');
});

t.test('follower lists, and unfollowing from the profile', async (t) => {
  await bobPage.goto(server.url + '/#/users/alice/followers');
  await bobPage.waitForSelector('.user-list li');
  t.same(await bobPage.$$eval('.user-list .handle', (els: any[]) => els.map((e) => e.textContent)), ['@bob']);
  t.equal(await bobPage.$eval('.tabs a[aria-current="page"]', (a: any) => a.textContent), 'Followers');
  await clickText(bobPage, '.follow button', 'Unfollow @alice');
  await waitInPage(bobPage, `document.querySelector('.follow button')?.textContent.trim() === 'Follow @alice'`);
  await waitInPage(bobPage, `document.querySelector('.profile-counts').textContent.includes('0 followers')`);
  await waitInPage(bobPage, `document.body.textContent.includes('Nobody follows @alice yet.')`);
  t.equal(await bobPage.$('.user-list li'), null, 'the list shown follows the unfollow');
  t.equal((await server.get('/api/users/@alice')).json.followers_count, 0);
  t.equal((await server.get('/api/users/@bob')).json.following_count, 0);
  await bobPage.goto(server.url + '/#/users/bob/following');
  await waitInPage(bobPage, `document.body.textContent.includes('@bob follows nobody yet.')`);
  t.pass('bob follows nobody');
});

t.test('endless scrolling loads the next page as the end comes into view', async (t) => {
  // carol has one post (the counter test); 24 more make 25, more than the first page of 20.
  for (let i = 1; i <= 24; i++) {
    const r = await server.post('/api/posts', { key: carol.key, json: { text: `carol's post number ${i}` } });
    t.equal(r.status, 201);
  }
  const page = await personPage(carol);
  // At least the first page: on a slow machine the list may already have laid out its end in view
  // and fetched the next page by the time this looks.
  await waitInPage(page, `document.querySelectorAll('.post-list article').length >= 20`);
  t.equal((await articleTexts(page))[0], "carol's post number 24", 'newest first');
  await page.evaluate(() => (globalThis as any).window.scrollTo(0, (globalThis as any).document.body.scrollHeight));
  await waitInPage(page, `document.querySelectorAll('.post-list article').length === 25`);
  await waitInPage(page, `document.body.textContent.includes('You have reached the beginning.')`);
  const texts = await articleTexts(page);
  t.equal(new Set(texts).size, 25, 'no post twice');
  t.equal(texts[24], 'a'.repeat(279) + '\u00e9', 'the oldest last, stored in NFC');

  // 25 posts of one author: each one's buttons are named after their post, not all "Like".
  const likes = await accessibleNames(page, '.post-list article button.like');
  t.equal(likes.length, 25);
  t.equal(new Set(likes).size, 25, 'every Like button has a name of its own');
  t.equal(likes[0], "Like your post “carol's post number 24”", "it says whose post, and which");
  t.equal(likes[24], `Like your post “${'a'.repeat(39)}…”`, 'a long post by how it begins');
  const deletes = await accessibleNames(page, '.post-list article button.delete-post');
  t.equal(new Set(deletes).size, 25, 'every Delete button too');
  t.equal(deletes[0], "Delete your post “carol's post number 24”");
  // And each post itself: by whom, when and how it begins, not the author's handle alone.
  const posts = await accessibleNames(page, '.post-list article');
  t.equal(new Set(posts).size, 25, 'every post has a name of its own');
  t.match(posts[0], /^@carol, .*\d.*, “carol's post number 24”$/, 'author, time, beginning');
  const replies = await accessibleNames(page, '.post-list article a.reply');
  t.equal(new Set(replies).size, 25, 'every Reply has a name of its own');
  t.equal(replies[0], "Reply to your post “carol's post number 24”");

  // Deleted from the keyboard: the focus goes to the post that takes its place, not the page's body.
  const loaded = () => page.$$eval('.post-list article', (els: any[]) => els.map((e) => e.dataset.postId as string));
  /** Deletes post `id` with Enter on its Delete and on the dialog's; waits until the focus is on `then`. */
  const deleteFromKeyboard = async (id: string, then: string) => {
    await page.focus(`article[data-post-id="${id}"] button.delete-post`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    await page.focus('dialog[open] button.danger');
    await page.keyboard.press('Enter');
    await waitInPage(page, `!document.querySelector('article[data-post-id="${id}"]')`);
    await waitInPage(page, `document.activeElement?.dataset?.postId === '${then}'`);
  };
  const [newest, next] = await loaded();
  await deleteFromKeyboard(newest, next);
  t.pass('the focus is on the next post');
  // The last post of the list: none after it (the list's end), so the one before.
  const [before, last] = (await loaded()).slice(-2);
  await deleteFromKeyboard(last, before);
  t.pass('after the last post, the focus is on the one before it');
});

t.test('web addresses in a post are links, opened apart from the app', async (t) => {
  const r = await server.post('/api/posts', { key: carol.key, json: { text: 'Read this (https://perch.example/abc1234). Or http://b.example/x?y=1, then javascript:alert(1)' } });
  t.equal(r.status, 201);
  const page = await personPage(carol);
  await page.waitForSelector(`article[data-post-id="${r.json.id}"] .post-text a`);
  const links = await page.$$eval(`article[data-post-id="${r.json.id}"] .post-text a`, (as: any[]) =>
    as.map((a) => ({ href: a.getAttribute('href'), text: a.textContent, target: a.getAttribute('target'), rel: a.getAttribute('rel') })),
  );
  const rel = 'noopener noreferrer nofollow ugc';
  t.same(links, [
    { href: 'https://perch.example/abc1234', text: 'https://perch.example/abc1234', target: '_blank', rel },
    { href: 'http://b.example/x?y=1', text: 'http://b.example/x?y=1', target: '_blank', rel },
  ]);
  t.equal(await textOf(page, `article[data-post-id="${r.json.id}"] .post-text`), 'Read this (https://perch.example/abc1234). Or http://b.example/x?y=1, then javascript:alert(1)', 'the text reads as written');
});

t.test('the phone-width layout (360 x 740)', async (t) => {
  const page = await personPage(carol, PHONE);
  // At least the first page: as in the test above, the next may already have been fetched.
  await waitInPage(page, `document.querySelectorAll('.post-list article').length >= 20`);
  t.equal(await overflowsSideways(page), false, 'home: nothing wider than the screen');
  const navBox = await page.$eval('nav[aria-label="Main"]', (n: any) => n.getBoundingClientRect().toJSON());
  t.ok(navBox.right <= 360, 'the navigation fits');
  await noSeriousViolations(t, page, 'home at phone width');
  // A picture wider than the phone, beside alice's small one.
  const wide = await server.post('/api/media', { key: alice.key, body: solidPng(480, 270, [200, 120, 30]), headers: { 'content-type': 'image/png' } });
  t.equal(wide.status, 201);
  const widePost = await server.post('/api/posts', { key: alice.key, json: { text: 'A wide picture.', media_ids: [wide.json.id] } });
  t.equal(widePost.status, 201);
  await page.goto(server.url + '/#/users/alice');
  await page.waitForSelector('.follow button');
  await waitInPage(page, `document.querySelectorAll('.post-list article').length === 2`);
  t.same(
    await accessibleNames(page, '.post-list article button.like'),
    ["Like @alice's post “A wide picture.”", "Like @alice's post “Hello from the web client, with a pictu…”"],
    "someone else's posts: whose, and which",
  );
  await waitInPage(page, `[...document.querySelectorAll('.post-media img')].every((i) => i.complete && i.naturalWidth > 0)`);
  t.equal(await overflowsSideways(page), false, 'profile: nothing wider than the screen');
  const shown = (id: string) => page.$eval(`article[data-post-id="${id}"] .post-media img`, (i: any) => ({ w: i.clientWidth, h: i.clientHeight, column: i.parentElement.clientWidth }));
  const small = await shown(postId);
  t.same([small.w, small.h], [40, 30], 'a small image keeps its natural size');
  const big = await shown(widePost.json.id);
  t.ok(big.w > 200 && big.w <= big.column, `a wide one shrinks to the column (${big.w} of ${big.column} px)`);
  t.ok(Math.abs(big.h - (big.w * 270) / 480) <= 1, `keeping its aspect ratio (${big.w} x ${big.h})`);
  await noSeriousViolations(t, page, 'profile at phone width');
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  t.equal(await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.documentElement).getPropertyValue('--bg').trim()), '#14171b', 'the dark scheme applies');
  await noSeriousViolations(t, page, 'profile in the dark scheme');
});

t.test('a thread: the posts it answers above, its replies below, oldest first, page by page', async (t) => {
  const say = async (key: Key, text: string, reply_to?: string) => {
    const r = await server.post('/api/posts', { key: key.key, json: { text, reply_to } });
    t.equal(r.status, 201);
    return r.json.id as string;
  };
  const root = await say(carol, 'Where should the next meetup be?');
  const first = await say(alice, 'The library has a room.', root);
  const nested = await say(carol, 'Which floor?', first);
  const more: string[] = [];
  for (let i = 1; i <= 21; i++) more.push(await say(bob, `Idea number ${i}`, root));

  await bobPage.goto(`${server.url}/#/posts/${root}`);
  // At least the first page: the next may already have been fetched if the list's end was in view.
  await waitInPage(bobPage, `document.querySelectorAll('.thread-replies article').length >= 20`);
  t.equal(await textOf(bobPage, '#replies-title'), '22 replies');
  const ids = () => bobPage.$$eval('.thread-replies article', (els: any[]) => els.map((e) => e.dataset.postId));
  t.same((await ids()).slice(0, 20), [first, ...more.slice(0, 19)], 'the first page, oldest first');
  t.equal(await bobPage.$('.ancestors'), null, 'a post that answers nothing has nothing above it');
  await bobPage.evaluate(() => (globalThis as any).window.scrollTo(0, (globalThis as any).document.body.scrollHeight));
  await waitInPage(bobPage, `document.querySelectorAll('.thread-replies article').length === 22`);
  await waitInPage(bobPage, `document.body.textContent.includes('That is every reply.')`);
  t.same(await ids(), [first, ...more], 'every reply once, as the API pages them');
  await noSeriousViolations(t, bobPage, 'a thread with many replies');

  // A reply with a reply of its own leads to its own thread.
  t.same(await accessibleNames(bobPage, `.thread-replies article[data-post-id="${first}"] a.replies-link`), ["1 reply to @alice's post “The library has a room.”"], 'its link says to which post');
  await bobPage.click(`.thread-replies article[data-post-id="${first}"] a.replies-link`);
  await waitInPage(bobPage, `location.hash === '#/posts/${first}' && document.querySelectorAll('.thread-replies article').length === 1`);
  await waitInPage(bobPage, `!!document.querySelector('.ancestors article[data-post-id="${root}"]')`);
  t.equal(await textOf(bobPage, '.ancestors .post-text'), 'Where should the next meetup be?', 'the post it answers, above');
  t.equal(await textOf(bobPage, '.focus-post .post-text'), 'The library has a room.');
  t.equal(await bobPage.$('.focus-post .reply-to'), null, 'no "replying to" line: the post it answers is right above');
  t.equal(await bobPage.$eval('.thread-replies article', (e: any) => e.dataset.postId), nested);
  await noSeriousViolations(t, bobPage, 'a reply in its thread');

  await bobPage.goto(`${server.url}/#/posts/${nested}`);
  await waitInPage(bobPage, `document.querySelectorAll('.ancestors article').length === 2`);
  t.same(await bobPage.$$eval('.ancestors article', (els: any[]) => els.map((e) => e.dataset.postId)), [root, first], 'the whole chain, oldest first');
  await waitInPage(bobPage, `document.body.textContent.includes('No replies yet.')`);

  // A post above deleted since this tab read it: not shown from memory on the next visit, and the
  // page says which one is missing.
  const deeper = await say(bob, 'Second floor, I think.', nested);
  t.equal((await server.request('DELETE', `/api/posts/${first}`, { key: alice.key })).status, 204);
  await bobPage.evaluate(`location.hash = '#/posts/${root}'`);
  await waitInPage(bobPage, `location.hash === '#/posts/${root}' && !!document.querySelector('.focus-post article[data-post-id="${root}"]')`);
  await bobPage.evaluate(`location.hash = '#/posts/${nested}'`);
  await waitInPage(bobPage, `document.body.textContent.includes('The post this replies to was deleted.')`);
  t.equal(await bobPage.$('.ancestors article'), null, 'the deleted post is gone from above it');
  await bobPage.evaluate(`location.hash = '#/posts/${deeper}'`);
  await waitInPage(bobPage, `document.body.textContent.includes('An earlier post in this thread was deleted.')`);
  t.same(await bobPage.$$eval('.ancestors article', (els: any[]) => els.map((e) => e.dataset.postId)), [nested], 'the chain up to the deleted post');
});

t.test('images uploaded for a post never sent are deleted when taken out, or left with the form', async (t) => {
  const page = await personPage(alice);
  await waitInPage(page, `document.querySelector('nav[aria-label="Main"] a[href="#/search"]') !== null && (document.querySelectorAll('.post-list article').length > 0 || document.body.textContent.includes('Nothing here yet'))`);
  const mediaDir = join(server.dataDir, 'media');
  const before = new Set(readdirSync(mediaDir));
  const fresh = () => readdirSync(mediaDir).filter((f) => !before.has(f)).sort();
  const postsBefore = (await server.get('/api/users/@alice/posts')).json.items.length;
  const [one, two, bad] = ['one.png', 'two.png', 'bad.png'].map((n) => join(files, n));
  writeFileSync(one, solidPng(8, 8, [200, 0, 0]));
  writeFileSync(two, solidPng(8, 8, [0, 200, 0]));
  writeFileSync(bad, 'not a picture at all');
  await page.type('#compose-text', 'Three pictures.');
  const input = (await page.$('#compose-media')) as ElementHandle<any>;
  await input.uploadFile(one, two, bad);
  await waitInPage(page, `document.querySelectorAll('.attachments img').length === 3`);
  await page.click('.compose button[type="submit"]');
  await waitInPage(page, `document.body.textContent.includes('bad.png could not be attached')`);
  const uploaded = fresh();
  t.equal(uploaded.length, 2, 'the first two were uploaded before the third was refused');
  t.equal((await server.get('/api/users/@alice/posts')).json.items.length, postsBefore, 'and nothing was posted');

  await page.click('.attachments li:first-child button');
  await waitInPage(page, `document.querySelectorAll('.attachments img').length === 2`);
  await eventually('the upload taken out deleted', 10_000, async () => (fresh().length === 1 ? true : undefined));
  t.same(fresh(), [uploaded[1]], 'the first upload is deleted, the second kept while it is still attached');
  t.equal((await fetch(`${server.url}/media/${uploaded[0]}`)).status, 404);

  await page.click('nav[aria-label="Main"] a[href="#/search"]');
  await eventually('the upload left with the form deleted', 10_000, async () => (fresh().length === 0 ? true : undefined));
  t.equal((await fetch(`${server.url}/media/${uploaded[1]}`)).status, 404, 'leaving the form deletes what it had uploaded');

  // A retry after the server forgot an image the form uploaded (a day later; deleted here from
  // elsewhere): the form uploads it again and posts.
  await page.click('nav[aria-label="Main"] a[href="#/"]');
  await page.waitForSelector('#compose-text');
  await page.type('#compose-text', 'One picture, later.');
  await ((await page.$('#compose-media')) as ElementHandle<any>).uploadFile(one, bad);
  await waitInPage(page, `document.querySelectorAll('.attachments img').length === 2`);
  await page.click('.compose button[type="submit"]');
  await waitInPage(page, `document.body.textContent.includes('bad.png could not be attached')`);
  const [first] = fresh();
  t.ok(first, 'the first image was uploaded');
  await page.click('.attachments li:nth-child(2) button');
  await waitInPage(page, `document.querySelectorAll('.attachments img').length === 1`);
  t.equal((await server.request('DELETE', `/api/media/${first}`, { key: alice.key })).status, 204);
  await page.click('.compose button[type="submit"]');
  await waitInPage(page, `document.querySelector('#compose-text').value === ''`);
  const latest = (await server.get('/api/users/@alice/posts')).json.items[0];
  t.equal(latest.text, 'One picture, later.');
  t.equal(latest.media_ids.length, 1);
  t.not(latest.media_ids[0], first, 'posted with the image uploaded again');
  const image = await fetch(`${server.url}/media/${latest.media_ids[0]}`);
  t.same(Buffer.from(await image.arrayBuffer()), solidPng(8, 8, [200, 0, 0]), 'the same picture');
});

t.test('no script errors or Content-Security-Policy violations in any tab', async (t) => {
  for (const p of pages) t.same(p.problems, []);
});
