import t from 'tap';
import { decodeLinkCursor, encodeLinkCursor } from '../../src/core/link-cursor';

t.test('round trip, bound to its scope', async (t) => {
  const c = encodeLinkCursor('user1', '382892044143566848');
  t.equal(decodeLinkCursor('user1', c), '382892044143566848');
  t.equal(decodeLinkCursor('user2', c), null, 'another list');
  t.equal(decodeLinkCursor('user1', c.slice(0, -1)), null, 'truncated');
  t.equal(decodeLinkCursor('user1', 'x' + c), null, 'altered');
  t.equal(decodeLinkCursor('user1', ''), null);
  t.equal(decodeLinkCursor('user1', 'abc'), null);
  t.equal(decodeLinkCursor('user1', '..'), null);
});
