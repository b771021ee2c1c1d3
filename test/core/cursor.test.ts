import t from 'tap';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { CursorCodec } from '../../src/core/cursor';

const key = randomBytes(32);
const cursors = new CursorCodec(key);

t.test('a cursor round-trips for its own list only', async (t) => {
  const c = cursors.encode('timeline:1', ['382893587576131584']);
  t.match(c, /^[A-Za-z0-9_-]+~[A-Za-z0-9_-]{16}$/);
  t.same(cursors.decode('timeline:1', c, 1), ['382893587576131584']);
  t.equal(cursors.decode('timeline:2', c, 1), null, 'another list refuses it');
  t.equal(cursors.decode('links:1', c, 1), null, 'another kind of list refuses it');
  t.equal(cursors.decode('timeline:1', c, 2), null, 'wrong arity');
  t.same(new CursorCodec(Buffer.from(key)).decode('timeline:1', c, 1), ['382893587576131584'], 'any thread with the same key reads it');
});

t.test('strings the server did not issue are refused', async (t) => {
  const c = cursors.encode('posts:7', ['123']);
  for (const bad of ['', 'abc', '123', c.slice(0, -1), c + 'x', 'x' + c, 'MTIz~AAAAAAAAAAAAAAAA', c.replace('~', '~~'), '~' + c]) {
    t.equal(cursors.decode('posts:7', bad, 1), null, JSON.stringify(bad));
  }
  const forgedBody = Buffer.from('-5').toString('base64url');
  t.equal(cursors.decode('posts:7', forgedBody + c.slice(c.indexOf('~')), 1), null);
});

t.test('a cursor cannot be made without the key', async (t) => {
  const body = Buffer.from('999').toString('base64url');
  // What an unkeyed checksum would have accepted, and a MAC under another installation's key.
  const unkeyed = createHash('sha256').update('posts:7').update('\0').update(body).digest('base64url').slice(0, 16);
  const otherKey = createHmac('sha256', randomBytes(32)).update('posts:7').update('\0').update(body).digest('base64url').slice(0, 16);
  t.equal(cursors.decode('posts:7', `${body}~${unkeyed}`, 1), null);
  t.equal(cursors.decode('posts:7', `${body}~${otherKey}`, 1), null);
  t.equal(new CursorCodec(randomBytes(32)).decode('posts:7', cursors.encode('posts:7', ['999']), 1), null, 'another installation refuses it');
  t.throws(() => new CursorCodec(Buffer.alloc(8)), /16 bytes/);
});
