import t from 'tap';
import { ifNoneMatchMatches } from '../../src/core/etag';

t.test('If-None-Match matches by weak comparison, in a list, or as *', async (t) => {
  const tag = '"123"';
  t.equal(ifNoneMatchMatches('"123"', tag), true);
  t.equal(ifNoneMatchMatches('W/"123"', tag), true, 'a weak tag matches');
  t.equal(ifNoneMatchMatches('"9", W/"123" ,"7"', tag), true, 'one of a list');
  t.equal(ifNoneMatchMatches('*', tag), true);
  t.equal(ifNoneMatchMatches('', tag), false, 'no header');
  t.equal(ifNoneMatchMatches('"1234"', tag), false);
  t.equal(ifNoneMatchMatches('123', tag), false, 'an unquoted value is not the tag');
  t.equal(ifNoneMatchMatches('"12", "3"', tag), false);
});
