// Password links: the form and the JSON 401 on GET /{code}, POST /{code} with the password (form
// or JSON), the limits on wrong guesses (per address and code, per code from every address),
// expiry, edits, and what is stored.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lmdbPath } from '../../src/store/lmdb';
import { openSqlite } from '../../src/store/sqlite';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { BROWSER_UA, create, shorten, waitFor } from './links-helpers';

let server: TestServer;
let alice: Key;
let bob: Key;

t.before(async () => {
  server = await startServer({
    threads: testThreads(),
    config: {
      server: { public_origin: 'https://sho.rt', trusted_proxies: ['127.0.0.1'] },
      anomaly: { max_links: 10000, max_same_domain: 10000 },
      // Freed codes may be taken again at once, so the reuse rule is seen from both sides.
      links: { alias_reuse_days: 0 },
    },
  });
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
});
t.teardown(() => server?.close());

const form = (password: string) => ({ body: new URLSearchParams({ password }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
/** A client of its own address (the server trusts X-Forwarded-For from 127.0.0.1). */
const from = (ip: string, opts: { body?: string; headers?: Record<string, string> } = {}) => ({ ...opts, headers: { ...opts.headers, 'x-forwarded-for': ip } });

t.test('creation: password_protected everywhere, never the password; 4-128 characters', async (t) => {
  const r = await shorten(server, alice, { url: 'https://example.com/secret', password: 'hunter22' });
  t.equal(r.status, 201);
  t.equal(r.json.password_protected, true);
  const code = r.json.short_code;
  const details = await server.get(`/api/links/${code}`, { key: alice.key });
  t.equal(details.json.password_protected, true);
  const list = await server.get('/api/links', { key: alice.key });
  t.equal(list.json.items.find((i: { short_code: string }) => i.short_code === code).password_protected, true);
  for (const body of [r.text, details.text, list.text]) t.notOk(body.includes('hunter22') || body.includes('scrypt'), 'no password or hash in answers');
  const db = openSqlite(server.dataDir, { readonly: true });
  const stored = (db.prepare('SELECT password_hash FROM links WHERE code = ?').get(code) as { password_hash: string }).password_hash;
  db.close();
  t.match(stored, /^scrypt\$16384\$8\$1\$/, 'a salted scrypt hash with its parameters');
  t.notOk(stored.includes('hunter22'));
  for (const password of ['abc', 'x'.repeat(129)]) {
    const bad = await shorten(server, alice, { url: 'https://example.com/', password });
    t.equal(bad.status, 400);
    t.same(bad.json.details, [{ path: 'password', message: 'must be 4 to 128 characters' }]);
  }
  t.equal((await shorten(server, alice, { url: 'https://example.com/', password: null })).status, 400, 'null is not a password on creation');
  t.equal((await shorten(server, alice, { url: 'https://example.com/', password: 'x'.repeat(128) })).status, 201);
});

t.test('GET answers the form (no target in it) or the JSON 401; the right password redirects and counts', async (t) => {
  const code = await create(server, alice, 'https://example.com/behind-password?token=abc', { password: 'open sesame' });
  const page = await server.get('/' + code);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.equal(page.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'", 'the form runs no script and cannot be framed');
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  t.equal(page.headers.get('cache-control'), 'private, no-store');
  t.match(page.text, /<form method="post">/);
  t.match(page.text, /name="password" type="password"/);
  t.notOk(page.text.includes('example.com') || page.text.includes('behind-password'), 'the target is not in the page');
  t.equal(page.headers.get('location'), null);
  const json = await server.get('/' + code, { headers: { accept: 'application/json' } });
  t.equal(json.status, 401);
  t.same(json.json, { error: 'password_required', message: 'This link is protected by a password.' });
  t.equal((await server.get('/' + code, { headers: { accept: 'Application/JSON' } })).status, 401, 'Accept in any case');
  const head = await server.request('HEAD', '/' + code);
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(page.text)));

  const right = await server.request('POST', '/' + code, { ...form('open sesame'), headers: { ...form('open sesame').headers, 'user-agent': BROWSER_UA, referer: 'https://chat.example/room' } });
  t.equal(right.status, 302);
  t.equal(right.headers.get('location'), 'https://example.com/behind-password?token=abc');
  t.equal(right.headers.get('cache-control'), 'private, no-store');
  const asJson = await server.post('/' + code, { json: { password: 'open sesame' }, headers: { 'user-agent': BROWSER_UA } });
  t.equal(asJson.status, 302);
  t.equal(asJson.headers.get('location'), 'https://example.com/behind-password?token=abc');
  const details = await waitFor('the clicks', async () => {
    const r = await server.get(`/api/links/${code}`, { key: alice.key });
    return r.json.clicks.total === 2 ? r.json : undefined;
  });
  t.same(details.clicks.referrers, [{ referrer: 'chat.example', count: 1 }, { referrer: 'direct', count: 1 }]);
  t.same(details.clicks.browsers, [{ name: 'Firefox', count: 2 }]);
  t.equal(details.clicks.bots, 0, 'viewing the form is not a click, nor a bot');
});

t.test('wrong passwords: 401, then 429 past five a minute per address and code', async (t) => {
  const code = await create(server, alice, 'https://example.com/guarded', { password: 'correct horse' });
  const other = await create(server, alice, 'https://example.com/guarded-too', { password: 'correct horse' });
  const ip = '203.0.113.7';
  const wrongJson = await server.post('/' + code, from(ip, { body: JSON.stringify({ password: 'wrong one' }), headers: { 'content-type': 'application/json' } }));
  t.equal(wrongJson.status, 401);
  t.same(wrongJson.json, { error: 'password_required', message: 'The password is not right.' });
  t.equal(wrongJson.headers.get('x-ratelimit-limit'), '5');
  t.equal(wrongJson.headers.get('x-ratelimit-remaining'), '4');
  const rightBetween = await server.post('/' + code, from(ip, form('correct horse')));
  t.equal(rightBetween.status, 302, 'a right password does not count against the allowance');
  t.equal(rightBetween.headers.get('x-ratelimit-remaining'), '4');
  for (let i = 0; i < 4; i++) {
    const wrong = await server.post('/' + code, from(ip, form(`guess ${i}`)));
    t.equal(wrong.status, 401);
    t.match(wrong.headers.get('content-type'), /^text\/html/, 'a form post gets the form again');
    t.equal(wrong.headers.get('x-frame-options'), 'DENY', 'under the same policy');
    t.match(wrong.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    t.match(wrong.text, /That password is not right/);
    t.match(wrong.text, /<form method="post">/);
  }
  const limited = await server.post('/' + code, from(ip, { body: JSON.stringify({ password: 'correct horse' }), headers: { 'content-type': 'application/json' } }));
  t.equal(limited.status, 429, 'even the right password waits');
  t.equal(limited.json.error, 'rate_limited');
  t.equal(limited.json.limit, 'link_password', 'the 429 names its limit, as every 429 does');
  t.ok(limited.json.retry_after_seconds >= 1);
  t.equal(limited.headers.get('retry-after'), String(limited.json.retry_after_seconds));
  t.equal(limited.headers.get('x-ratelimit-remaining'), '0');
  t.match(limited.headers.get('x-ratelimit-reset'), /^\d+$/);
  const limitedForm = await server.post('/' + code, from(ip, form('correct horse')));
  t.equal(limitedForm.status, 429);
  t.match(limitedForm.text, /Too many wrong passwords/);
  t.equal((await server.post('/' + other, from(ip, form('correct horse')))).status, 302, 'another code from the same address is not limited');
  t.equal((await server.post('/' + code, from('198.51.100.9', form('correct horse')))).status, 302, 'another address is not limited');
  t.equal((await server.post('/' + code, from(ip, form('abc')))).status, 429, 'limited before anything is checked');
  const tooShort = await server.post('/' + other, from('198.51.100.10', form('abc')));
  t.equal(tooShort.status, 401);
  t.equal(tooShort.headers.get('x-ratelimit-remaining'), '5', 'a password no link can have costs no guess');

  // The counts are in the hot store, keyed by a pseudonym of the address, never the address.
  const hot = readFileSync(join(lmdbPath(server.dataDir), 'data.mdb')).toString('latin1');
  t.ok(hot.includes(`|${code}|link_password`), "the guesses' record is there");
  t.equal(hot.includes(ip), false, 'no raw client address in the hot store');
  t.equal(hot.includes('198.51.100.9'), false);
});

t.test('an IPv6 client is counted by its /64: moving within it gives no new guesses', async (t) => {
  const code = await create(server, alice, 'https://example.com/guarded-v6', { password: 'correct horse' });
  for (let i = 1; i <= 5; i++) {
    const wrong = await server.post('/' + code, from(`2001:db8:7:7::${i.toString(16)}`, form(`guess ${i}`)));
    t.equal(wrong.status, 401, `guess ${i} from another address of the /64`);
    t.equal(wrong.headers.get('x-ratelimit-remaining'), String(5 - i), 'one allowance');
  }
  t.equal((await server.post('/' + code, from('2001:db8:7:7:abcd:ef01:2345:6789', form('correct horse')))).status, 429, 'a sixth address of the /64 is refused');
  t.equal((await server.post('/' + code, from('2001:db8:7:8::1', form('correct horse')))).status, 302, 'the next /64 is another client');
});

t.test("wrong passwords from every client together: 429 for all past the link's allowance; a new password opens it", async (t) => {
  // A server of its own, so that the allowance of a link for all clients is small enough to spend.
  const guarded = await startServer({
    threads: testThreads(),
    config: {
      server: { public_origin: 'https://sho.rt', trusted_proxies: ['127.0.0.1'] },
      limits: { link_password_all_clients: { capacity: 6, refill_per_second: 0.001 } },
    },
  });
  t.teardown(() => guarded.close());
  const owner = await guarded.keygen('owner');
  const code = await create(guarded, owner, 'https://example.com/crowd-guarded', { password: 'correct horse' });
  const other = await create(guarded, owner, 'https://example.com/crowd-guarded-too', { password: 'correct horse' });
  for (let i = 0; i < 5; i++) t.equal((await guarded.post('/' + code, from('203.0.113.1', form(`guess ${i}`)))).status, 401);
  const clientLimited = await guarded.post('/' + code, from('203.0.113.1', form('guess 5')));
  t.equal(clientLimited.status, 429);
  t.match(clientLimited.text, /Too many wrong passwords/);
  const sixth = await guarded.post('/' + code, from('203.0.113.2', { body: JSON.stringify({ password: 'guess 6' }), headers: { 'content-type': 'application/json' } }));
  t.equal(sixth.status, 401, "a guess refused by its client's limit took nothing from the link's: a sixth is checked");
  t.equal(sixth.headers.get('x-ratelimit-limit'), '5', "a 401 carries the client's own limit");
  t.equal(sixth.headers.get('x-ratelimit-remaining'), '4');

  const locked = await guarded.post('/' + code, from('203.0.113.3', { body: JSON.stringify({ password: 'correct horse' }), headers: { 'content-type': 'application/json' } }));
  t.equal(locked.status, 429, 'a new client with the right password waits too');
  t.equal(locked.json.error, 'rate_limited');
  t.equal(locked.json.limit, 'link_password_all_clients');
  t.equal(locked.json.message, 'Too many wrong passwords for this link from all its visitors; try again later.');
  t.ok(locked.json.retry_after_seconds >= 1);
  t.equal(locked.headers.get('retry-after'), String(locked.json.retry_after_seconds));
  t.equal(locked.headers.get('x-ratelimit-limit'), '6', "the 429's headers describe the limit that refused it");
  t.equal(locked.headers.get('x-ratelimit-remaining'), '0');
  const lockedForm = await guarded.post('/' + code, from('203.0.113.4', form('correct horse')));
  t.equal(lockedForm.status, 429);
  t.match(lockedForm.headers.get('content-type'), /^text\/html/);
  t.match(lockedForm.text, /Too many wrong passwords/);
  t.equal((await guarded.post('/' + code, from('203.0.113.5', form('abc')))).status, 429, 'limited before anything is checked');
  const ownAllowance = await guarded.post('/' + other, from('203.0.113.3', form('wrong again')));
  t.equal(ownAllowance.status, 401, 'another link has an allowance of its own');
  t.equal(ownAllowance.headers.get('x-ratelimit-remaining'), '4', "and the refused guesses cost the client nothing");
  t.equal((await guarded.post('/' + other, from('203.0.113.3', form('correct horse')))).status, 302);

  const changed = await guarded.request('PATCH', `/api/links/${code}`, { key: owner.key, json: { password: 'battery staple' } });
  t.equal(changed.status, 200);
  t.equal((await guarded.post('/' + code, from('198.51.100.1', form('battery staple')))).status, 302, 'a new password opens the link to its visitors again');
  t.equal((await guarded.post('/' + code, from('198.51.100.2', form('battery staple')))).status, 302, 'right passwords cost nothing');
  for (let i = 0; i < 6; i++) {
    t.equal((await guarded.post('/' + code, from(`198.51.100.${10 + i}`, form(`guess ${i}`)))).status, 401, `wrong guess ${i + 1} of 6 from another client`);
  }
  t.equal((await guarded.post('/' + code, from('198.51.100.20', form('battery staple')))).status, 429, 'the seventh is refused');

  const metrics = await guarded.get('/metrics');
  t.match(metrics.text, /perch_rate_limit_rejections_total\{limit="link_password_all_clients"\} [1-9]/);
  const hot = readFileSync(join(lmdbPath(guarded.dataDir), 'data.mdb')).toString('latin1');
  t.ok(hot.includes(`link_password_all_clients:${code}`), "the link's record is kept by code");
});

t.test('bad bodies, unknown, expired and open links', async (t) => {
  const code = await create(server, alice, 'https://example.com/bodies', { password: 'pass word' });
  // Every answer of a password link's POST shows the wrong-password limit, as it stands: none
  // of these checked a password, so none took a guess.
  const ip = '203.0.113.40';
  const limitShown = (r: { headers: Headers }, what: string) => {
    t.equal(r.headers.get('x-ratelimit-limit'), '5', `${what}: X-RateLimit-Limit`);
    t.equal(r.headers.get('x-ratelimit-remaining'), '5', `${what}: nothing consumed`);
    t.match(r.headers.get('x-ratelimit-reset'), /^\d+$/, `${what}: X-RateLimit-Reset`);
  };
  const wrongType = await server.request('POST', '/' + code, from(ip, { body: 'password=pass+word', headers: { 'content-type': 'text/plain' } }));
  t.equal(wrongType.status, 415);
  limitShown(wrongType, '415');
  const missing = await server.post('/' + code, from(ip, { body: 'other=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }));
  t.equal(missing.status, 400);
  t.same(missing.json.details, [{ path: 'password', message: 'is required' }]);
  limitShown(missing, '400 without a password');
  const notJson = await server.post('/' + code, from(ip, { body: '{"password":', headers: { 'content-type': 'application/json' } }));
  t.equal(notJson.status, 400);
  limitShown(notJson, '400 not JSON');
  const unknownField = await server.post('/' + code, from(ip, { body: JSON.stringify({ password: 'pass word', remember: true }), headers: { 'content-type': 'application/json' } }));
  t.equal(unknownField.status, 400);
  t.equal(unknownField.json.details[0].path, 'remember');
  limitShown(unknownField, '400 unknown field');
  const tooLarge = await server.post('/' + code, from(ip, { body: 'password=' + 'x'.repeat(17 * 1024), headers: { 'content-type': 'application/x-www-form-urlencoded' } }));
  t.equal(tooLarge.status, 413);
  limitShown(tooLarge, '413');
  const openCode = await create(server, alice, 'https://example.com/bodies-open');
  const openTooLarge = await server.post('/' + openCode, from(ip, { body: 'password=' + 'x'.repeat(17 * 1024), headers: { 'content-type': 'application/x-www-form-urlencoded' } }));
  t.equal(openTooLarge.status, 413);
  t.equal(openTooLarge.headers.get('x-ratelimit-limit'), null, 'a link without a password has no such limit to show');
  const plusEncoded = await server.post('/' + code, form('pass word'));
  t.equal(plusEncoded.status, 302, 'form encoding decoded');

  const unknown = await server.post('/NoSuchCode1', form('pass word'));
  t.equal(unknown.status, 404);
  t.match(unknown.text, /Link not found/);
  const unknownJson = await server.post('/NoSuchCode1', { json: { password: 'pass word' } });
  t.equal(unknownJson.status, 404);
  t.equal(unknownJson.json.error, 'not_found');

  // Far enough ahead that the creation is answered before it, on a starved machine too.
  const expires = new Date(Date.now() + 2000).toISOString();
  const expiring = await create(server, alice, 'https://example.com/expiring', { password: 'pass word', expires_at: expires });
  await new Promise((r) => setTimeout(r, Date.parse(expires) - Date.now() + 100));
  t.equal((await server.get('/' + expiring)).status, 410, 'an expired password link is 410, not the form');
  const expiredJson = await server.get('/' + expiring, { headers: { accept: 'application/json' } });
  t.equal(expiredJson.json.error, 'gone');
  t.equal((await server.post('/' + expiring, form('pass word'))).status, 410);

  const open = await create(server, alice, 'https://example.com/open');
  const post = await server.post('/' + open, form('anything'));
  t.equal(post.status, 302, 'a link without a password just redirects');
  t.equal(post.headers.get('location'), 'https://example.com/open');
});

t.test('PATCH sets, changes and removes the password; redirects follow at once', async (t) => {
  const code = await create(server, alice, 'https://example.com/patched');
  t.equal((await server.get('/' + code)).status, 302);
  const set = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { password: 'first pass' } });
  t.equal(set.status, 200);
  t.equal(set.json.password_protected, true);
  t.equal((await server.get('/' + code)).status, 200, 'the form from the moment of the answer');
  t.equal((await server.post('/' + code, form('first pass'))).status, 302);
  await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { password: 'second pass' } });
  t.equal((await server.post('/' + code, from('192.0.2.1', form('first pass')))).status, 401, 'the old password no longer opens it');
  t.equal((await server.post('/' + code, form('second pass'))).status, 302);
  const urlOnly = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { url: 'https://example.com/moved' } });
  t.equal(urlOnly.json.password_protected, true, 'an edit without password keeps it');
  const removed = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { password: null } });
  t.equal(removed.status, 200);
  t.equal(removed.json.password_protected, false);
  const go = await server.get('/' + code);
  t.equal(go.status, 302);
  t.equal(go.headers.get('location'), 'https://example.com/moved');
  const short = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: { password: 'abc' } });
  t.equal(short.status, 400);
  t.same(short.json.details, [{ path: 'password', message: 'must be 4 to 128 characters' }]);
  const empty = await server.request('PATCH', `/api/links/${code}`, { key: alice.key, json: {} });
  t.equal(empty.status, 200, 'an empty edit changes nothing');
  t.match(empty.json, { short_code: code, url: 'https://example.com/moved', password_protected: false }, 'and answers the details as they are');
  t.equal((await server.request('PATCH', `/api/links/${code}`, { key: bob.key, json: { password: 'mine now' } })).status, 404, "not bob's");
});

t.test('with links.alias_reuse_days 0 a deleted code is free for an alias at once', async (t) => {
  const code = await create(server, alice, 'https://example.com/short-lived', { alias: 'reuse-me' });
  t.equal((await server.request('DELETE', `/api/links/${code}`, { key: alice.key })).status, 204);
  const again = await shorten(server, bob, { url: 'https://bob.example/', alias: 'reuse-me' });
  t.equal(again.status, 201);
  t.equal((await server.get('/reuse-me')).headers.get('location'), 'https://bob.example/');
});
