import t from 'tap';
import { decodeCursor, encodeCursor } from '../../src/core/cursor';

t.test('a cursor round-trips for its own list only', async (t) => {
  const c = encodeCursor('timeline:1', ['382893587576131584']);
  t.match(c, /^[A-Za-z0-9_-]+~[A-Za-z0-9_-]{10}$/);
  t.same(decodeCursor('timeline:1', c, 1), ['382893587576131584']);
  t.equal(decodeCursor('timeline:2', c, 1), null, 'another list refuses it');
  t.equal(decodeCursor('timeline:1', c, 2), null, 'wrong arity');
});

t.test('strings the server did not issue are refused', async (t) => {
  const c = encodeCursor('posts:7', ['123']);
  for (const bad of ['', 'abc', '123', c.slice(0, -1), c + 'x', 'MTIz~AAAAAAAAAA', c.replace('~', '~~'), '~' + c]) {
    t.equal(decodeCursor('posts:7', bad, 1), null, JSON.stringify(bad));
  }
  const forgedBody = Buffer.from('-5').toString('base64url');
  t.equal(decodeCursor('posts:7', forgedBody + c.slice(c.indexOf('~')), 1), null);
});
