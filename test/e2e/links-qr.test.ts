// GET /api/links/{code}/qr: SVG and PNG images that decode back to the link's short URL.
import t from 'tap';
import { startServer, testThreads, type Key, type TestServer } from '../helpers/server';
import { decodePng, decodeSvg } from '../helpers/qr';
import { create } from './links-helpers';

let server: TestServer;
let alice: Key;
let bob: Key;
let admin: Key;

t.before(async () => {
  server = await startServer({ threads: testThreads(), config: { server: { public_origin: 'https://sho.rt' } } });
  alice = await server.keygen('alice');
  bob = await server.keygen('bob');
  admin = await server.keygen('root', true);
});
t.teardown(() => server?.close());

async function image(path: string, key: Key) {
  const r = await fetch(server.url + path, { headers: { authorization: `Bearer ${key.key}` } });
  return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
}

t.test('SVG by default, 256 px, decoding to the short URL', async (t) => {
  const code = await create(server, alice, 'https://example.com/qr-target');
  const r = await image(`/api/links/${code}/qr`, alice);
  t.equal(r.status, 200);
  t.equal(r.type, 'image/svg+xml');
  const svg = r.bytes.toString('utf8');
  t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  t.notOk(svg.includes('example.com'), 'the image encodes the short URL, not the target');
  t.same(decodeSvg(svg), { width: 256, height: 256, text: `https://sho.rt/${code}` });
  t.equal((await image(`/api/links/${code}/qr?format=svg&format=png`, alice)).type, 'image/svg+xml', 'the first of a repeated parameter');
  const sized = await image(`/api/links/${code}/qr?format=svg&size=1024`, alice);
  t.same(decodeSvg(sized.bytes.toString('utf8')), { width: 1024, height: 1024, text: `https://sho.rt/${code}` });
});

t.test('PNG at the asked size, decoding to the short URL; an alias too', async (t) => {
  const code = await create(server, alice, 'https://example.com/qr-png');
  for (const size of [64, 128, 300, 1024]) {
    const r = await image(`/api/links/${code}/qr?format=png&size=${size}`, alice);
    t.equal(r.status, 200);
    t.equal(r.type, 'image/png');
    t.same(decodePng(r.bytes), { width: size, height: size, text: `https://sho.rt/${code}` }, `${size} px`);
  }
  // Every size, exactly: the library's scaling came out a pixel short for some of them with a
  // symbol of 37 modules (this alias's short URL makes one; 78 px came out 77).
  const long = await create(server, alice, 'https://example.com/qr-sizes', { alias: 'qr-every-size' });
  const wrong: string[] = [];
  for (let size = 64; size <= 320; size++) {
    const png = (await image(`/api/links/${long}/qr?format=png&size=${size}`, alice)).bytes;
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    if (width !== size || height !== size) wrong.push(`${size}: ${width} x ${height}`);
  }
  t.same(wrong, [], 'every PNG size from 64 to 320 px is the size asked for');
  const alias = await create(server, alice, 'https://example.com/qr-alias', { alias: 'qr_Alias-1' });
  const r = await image(`/api/links/${alias}/qr?format=png`, alice);
  t.same(decodePng(r.bytes), { width: 256, height: 256, text: 'https://sho.rt/qr_Alias-1' });
});

t.test('owner or admin; bad format or size is 400', async (t) => {
  const code = await create(server, alice, 'https://example.com/qr-private');
  t.equal((await image(`/api/links/${code}/qr`, admin)).status, 200, 'admin');
  const other = await server.get(`/api/links/${code}/qr`, { key: bob.key });
  t.equal(other.status, 404, "someone else's link does not exist");
  t.equal(other.json.error, 'not_found');
  t.equal((await server.get(`/api/links/${code}/qr?size=1`, { key: bob.key })).status, 404, 'whatever the query says');
  t.equal((await server.get('/api/links/nosuchcode/qr', { key: alice.key })).status, 404);
  t.equal((await server.get(`/api/links/${code}/qr`)).status, 401);
  for (const [query, path] of [
    ['format=gif', 'format'],
    ['format=', 'format'],
    ['size=63', 'size'],
    ['size=1025', 'size'],
    ['size=abc', 'size'],
    ['size=100.5', 'size'],
    ['size=-64', 'size'],
  ]) {
    const r = await server.get(`/api/links/${code}/qr?${query}`, { key: alice.key });
    t.equal(r.status, 400, query);
    t.equal(r.json.details[0].path, path, query);
  }
});
