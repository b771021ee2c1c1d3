import t from 'tap';
import { connect } from 'node:net';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type Key, type TestServer } from '../helpers/server';
import { eventually } from '../helpers/eventually';

let server: TestServer;
let user: Key;

t.before(async () => {
  server = await startServer();
  user = await server.keygen('pics');
});
t.teardown(() => server.close());

const SAMPLES: Record<string, Buffer> = {
  'image/png': Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100, 7)]),
  'image/jpeg': Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(50, 1)]),
  'image/gif': Buffer.from('GIF89a' + 'x'.repeat(20), 'latin1'),
  'image/webp': Buffer.from('RIFF\x20\x00\x00\x00WEBPVP8 ' + 'y'.repeat(20), 'latin1'),
};

t.test('each accepted type uploads and is served back with its type and caching headers', async (t) => {
  for (const [type, bytes] of Object.entries(SAMPLES)) {
    const r = await server.post('/api/media', { key: user.key, body: bytes, headers: { 'content-type': type } });
    t.equal(r.status, 201, type);
    t.match(r.json.id, /^[1-9][0-9]+-[0-9a-f]{24}$/, 'a time-ordered id and 96 random bits');
    t.same(r.json, { id: r.json.id, content_type: type, size: bytes.length, url: `/media/${r.json.id}` });
    const got = await fetch(server.url + r.json.url);
    t.equal(got.status, 200);
    t.equal(got.headers.get('content-type'), type);
    t.equal(got.headers.get('cache-control'), 'public, max-age=3600');
    t.equal(got.headers.get('etag'), `"${r.json.id}"`);
    t.same(Buffer.from(await got.arrayBuffer()), bytes);
    const head = await fetch(server.url + r.json.url, { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(head.headers.get('content-type'), type);
    t.equal(head.headers.get('content-length'), String(bytes.length), 'HEAD tells the length a GET would send');
    t.equal((await head.arrayBuffer()).byteLength, 0, 'and sends no body');
  }
});

t.test('a conditional GET with the ETag answers 304 without the bytes', async (t) => {
  const r = await server.post('/api/media', { key: user.key, body: SAMPLES['image/png'], headers: { 'content-type': 'image/png' } });
  const url = server.url + r.json.url;
  const etag = `"${r.json.id}"`;
  for (const value of [etag, `W/${etag}`, `"0", ${etag}`, '*']) {
    const got = await fetch(url, { headers: { 'if-none-match': value } });
    t.equal(got.status, 304, value);
    t.equal(got.headers.get('etag'), etag);
    t.equal(got.headers.get('cache-control'), 'public, max-age=3600');
    t.equal((await got.arrayBuffer()).byteLength, 0);
  }
  const other = await fetch(url, { headers: { 'if-none-match': '"0"' } });
  t.equal(other.status, 200, 'another tag gets the bytes');
  t.same(Buffer.from(await other.arrayBuffer()), SAMPLES['image/png']);
  const head = await fetch(url, { method: 'HEAD', headers: { 'if-none-match': etag } });
  t.equal(head.status, 304, 'HEAD too');
  const [timeOrdered, random] = r.json.id.split('-');
  for (const guess of [timeOrdered, `${timeOrdered}-${'0'.repeat(24)}`, `${timeOrdered}-${random.slice(1)}0`]) {
    t.equal((await fetch(server.url + '/media/' + guess)).status, 404, `a guess without the random part: ${guess}`);
  }
  const missing = await fetch(server.url + '/media/123456789', { headers: { 'if-none-match': '*' } });
  t.equal(missing.status, 404, 'a missing file is 404 whatever the condition');
});

t.test('type checked by magic bytes: mismatch 400, other types 415, empty 400', async (t) => {
  const mismatch = await server.post('/api/media', { key: user.key, body: SAMPLES['image/gif'], headers: { 'content-type': 'image/png' } });
  t.equal(mismatch.status, 400);
  t.equal(mismatch.json.error, 'invalid_request');
  t.equal(mismatch.json.message, 'The body is image/gif, not image/png.', 'a sentence, not a path-less detail');
  const junk = await server.post('/api/media', { key: user.key, body: Buffer.from('hello'), headers: { 'content-type': 'image/jpeg' } });
  t.equal(junk.status, 400);
  const svg = await server.post('/api/media', { key: user.key, body: Buffer.from('<svg/>'), headers: { 'content-type': 'image/svg+xml' } });
  t.equal(svg.status, 415);
  t.equal(svg.json.error, 'unsupported_media_type');
  const none = await server.post('/api/media', { key: user.key, body: SAMPLES['image/png'] });
  t.equal(none.status, 415);
  const empty = await server.post('/api/media', { key: user.key, body: Buffer.alloc(0), headers: { 'content-type': 'image/png' } });
  t.equal(empty.status, 400);
  t.equal(empty.json.message, 'The body is empty.');
  const withParams = await server.post('/api/media', { key: user.key, body: SAMPLES['image/png'], headers: { 'content-type': 'Image/PNG; x=1' } });
  t.equal(withParams.status, 201);
  t.equal(withParams.json.content_type, 'image/png');
  t.equal((await server.post('/api/media', { body: SAMPLES['image/png'], headers: { 'content-type': 'image/png' } })).status, 401);
});

t.test('5 MiB is the limit', async (t) => {
  const max = Buffer.concat([SAMPLES['image/png'].subarray(0, 8), Buffer.alloc(5 * 1024 * 1024 - 8)]);
  const ok = await server.post('/api/media', { key: user.key, body: max, headers: { 'content-type': 'image/png' } });
  t.equal(ok.status, 201);
  t.equal(ok.json.size, 5 * 1024 * 1024);
  // The server answers 413 as soon as it sees the declared length, before the body is sent,
  // so this speaks HTTP on a socket instead of through fetch (which fails on the early close).
  const port = Number(new URL(server.url).port);
  const answer = await new Promise<string>((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => {
      sock.write(`POST /api/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: image/png\r\nContent-Length: ${5 * 1024 * 1024 + 1}\r\n\r\n`);
    });
    let data = '';
    sock.on('data', (d) => (data += d.toString()));
    sock.on('close', () => resolve(data));
    sock.on('error', reject);
    setTimeout(() => sock.destroy(), 3000);
  });
  t.match(answer, /^HTTP\/1\.1 413 /);
  t.match(answer, /"error":"payload_too_large"/);
});

t.test('unknown media is 404', async (t) => {
  t.equal((await server.get('/media/123456789')).status, 404);
  t.equal((await server.get('/media/..%2Fperch.db')).status, 404);
  t.equal((await server.get('/media/abc')).status, 404);
});

t.test("a deleted post's images are no longer served once no live post carries them", async (t) => {
  const up = await server.post('/api/media', { key: user.key, body: SAMPLES['image/png'], headers: { 'content-type': 'image/png' } });
  t.equal(up.status, 201);
  const url = server.url + up.json.url;
  t.equal((await fetch(url)).status, 200, 'uploaded, not posted yet: served (the author may post it)');
  const first = await server.post('/api/posts', { key: user.key, json: { text: 'one', media_ids: [up.json.id] } });
  const second = await server.post('/api/posts', { key: user.key, json: { text: 'two', media_ids: [up.json.id] } });
  t.equal(first.status, 201);
  t.equal(second.status, 201);
  t.equal((await server.request('DELETE', `/api/posts/${first.json.id}`, { key: user.key })).status, 204);
  t.equal((await fetch(url)).status, 200, 'still on a live post');
  t.equal((await server.request('DELETE', `/api/posts/${second.json.id}`, { key: user.key })).status, 204);
  const gone = await fetch(url);
  t.equal(gone.status, 404, 'its last post deleted: 404');
  t.equal(((await gone.json()) as { error: string }).error, 'not_found');
  const revalidated = await fetch(url, { headers: { 'if-none-match': `"${up.json.id}"` } });
  t.equal(revalidated.status, 404, 'a cache revalidating its copy is told it is gone, not 304');
  const reuse = await server.post('/api/posts', { key: user.key, json: { text: 'three', media_ids: [up.json.id] } });
  t.equal(reuse.status, 201, 'its owner may post it again');
  t.equal((await fetch(url)).status, 200, 'and it is served again');
});

t.test("a user's uploads stop at the media quota: 413, nothing kept, other users unaffected", async (t) => {
  const png = SAMPLES['image/png'];
  // Room for two of these files a user, not three.
  const quota = png.length * 2 + 10;
  const small = await startServer({ config: { media: { user_quota_bytes: quota } } });
  t.teardown(() => small.close());
  const [ann, ben] = await Promise.all([small.keygen('ann'), small.keygen('ben')]);
  const upload = (key: Key) => small.post('/api/media', { key: key.key, body: png, headers: { 'content-type': 'image/png' } });
  const files = () => readdirSync(join(small.dataDir, 'media')).sort();

  t.same([(await upload(ann)).status, (await upload(ann)).status], [201, 201]);
  const over = await upload(ann);
  t.equal(over.status, 413);
  t.same(over.json, {
    error: 'payload_too_large',
    message: `This upload (${png.length} B) would take your media past its quota of ${quota} B (${png.length * 2} B used).`,
    quota_bytes: quota,
    used_bytes: png.length * 2,
  });
  t.equal(files().length, 2, 'no file written for it');

  // Five at once, each passing the check made before its file is written: the writer's check
  // lets two in, and the files of the three it refuses are removed.
  const together = await Promise.all(Array.from({ length: 5 }, () => upload(ben)));
  t.same(together.map((r) => r.status).sort(), [201, 201, 413, 413, 413]);
  const kept = together.filter((r) => r.status === 201).map((r) => r.json.id as string);
  t.ok(kept.every((id) => files().includes(id)), 'every kept upload has its file');
  t.equal(files().length, 4, "ann's two and ben's two: no file of a refused upload is left");
  for (const id of kept) t.equal((await fetch(`${small.url}/media/${id}`)).status, 200);
});

t.test('an uploader deletes a file: 204, no longer served, its file and quota freed; refusals change nothing', async (t) => {
  const png = SAMPLES['image/png'];
  // Room for one of these files a user: a deletion must give the room back.
  const small = await startServer({ config: { media: { user_quota_bytes: png.length + 10 } } });
  t.teardown(() => small.close());
  const [ann, ben] = await Promise.all([small.keygen('ann'), small.keygen('ben')]);
  const upload = (key: Key) => small.post('/api/media', { key: key.key, body: png, headers: { 'content-type': 'image/png' } });
  const del = (id: string, key?: Key) => small.request('DELETE', `/api/media/${id}`, key ? { key: key.key } : {});
  const files = () => readdirSync(join(small.dataDir, 'media')).sort();

  const first = await upload(ann);
  t.equal(first.status, 201);
  const id = first.json.id as string;
  t.equal((await del(id)).status, 401, 'a key is needed');
  const byBen = await del(id, ben);
  t.equal(byBen.status, 403, "ben cannot delete ann's file");
  t.same(byBen.json, { error: 'forbidden', message: 'Only its uploader can delete a media file.' });
  t.equal((await del('123-abc', ann)).status, 404, 'not a media id');
  t.equal((await del('1234567890123-0123456789abcdef01234567', ann)).status, 404, 'no such file');
  t.equal((await fetch(`${small.url}/media/${id}`)).status, 200, 'still served after the refusals');
  t.same(files(), [id]);

  const posted = await small.post('/api/posts', { key: ann.key, json: { text: 'look', media_ids: [id] } });
  t.equal(posted.status, 201);
  const inPost = await del(id, ann);
  t.equal(inPost.status, 409, 'a file in a post stays');
  t.same(inPost.json, { error: 'conflict', message: 'This file is in a post; delete the post first.' });
  t.equal((await small.request('DELETE', `/api/posts/${posted.json.id}`, { key: ann.key })).status, 204);
  t.equal((await upload(ann)).status, 413, 'a deleted post keeps its file, and the quota counts it');

  const deleted = await del(id, ann);
  t.equal(deleted.status, 204, 'once its post is deleted, its uploader may delete it');
  t.equal(deleted.text, '');
  t.equal((await fetch(`${small.url}/media/${id}`)).status, 404, 'no longer served');
  t.same(files(), [], 'its file is gone');
  t.equal((await del(id, ann)).status, 404, 'deleted already');
  const again = await upload(ann);
  t.equal(again.status, 201, 'the quota has its room back');
  t.equal((await del(again.json.id, ann)).status, 204, 'a file never posted is deleted the same way');
  const reuse = await small.post('/api/posts', { key: ann.key, json: { text: 'gone', media_ids: [again.json.id] } });
  t.equal(reuse.status, 400, 'a deleted file cannot be posted');
  t.equal(reuse.json.details[0].path, 'media_ids.0');
});

t.test('a file never posted is forgotten after media.unposted_ttl_seconds; a posted one stays', async (t) => {
  const png = SAMPLES['image/png'];
  const brief = await startServer({ config: { media: { unposted_ttl_seconds: 2 } } });
  t.teardown(() => brief.close());
  const cat = await brief.keygen('cat');
  const upload = async () => (await brief.post('/api/media', { key: cat.key, body: png, headers: { 'content-type': 'image/png' } })).json.id as string;
  const [left, kept] = [await upload(), await upload()];
  t.equal((await brief.post('/api/posts', { key: cat.key, json: { text: 'one of two', media_ids: [kept] } })).status, 201);
  const files = () => readdirSync(join(brief.dataDir, 'media'));
  t.same(files().sort(), [left, kept].sort(), 'both files are on disk at first');

  // Its row goes first (it is then no longer served), its file right after.
  await eventually('the unposted file forgotten', 15_000, async () => ((await fetch(`${brief.url}/media/${left}`)).status === 404 && !files().includes(left) ? true : undefined));
  t.same(files(), [kept], 'its file is removed, the posted one kept');
  t.equal((await fetch(`${brief.url}/media/${kept}`)).status, 200);
  const late = await brief.post('/api/posts', { key: cat.key, json: { text: 'too late', media_ids: [left] } });
  t.equal(late.status, 400, 'posting it now is refused as any unknown file');
  t.ok(brief.logs.some((l) => l.includes('"msg":"unposted media removed"') && l.includes('"files":1')), 'the removal is logged');
});

t.test('a row whose file is gone (deleted meanwhile, restored without it) answers 404, not 500', async (t) => {
  const up = await server.post('/api/media', { key: user.key, body: SAMPLES['image/gif'], headers: { 'content-type': 'image/gif' } });
  t.equal(up.status, 201);
  rmSync(join(server.dataDir, 'media', up.json.id));
  const got = await fetch(`${server.url}/media/${up.json.id}`);
  t.equal(got.status, 404);
  t.same(await got.json(), { error: 'not_found', message: 'No such media.' });
  // A cache holding the file asks whether its copy is still good: not a 304 for bytes that are gone.
  const revalidated = await fetch(`${server.url}/media/${up.json.id}`, { headers: { 'if-none-match': `"${up.json.id}"` } });
  t.equal(revalidated.status, 404, 'a conditional GET is told it is gone too');
  t.same(await revalidated.json(), { error: 'not_found', message: 'No such media.' });
});
