import t from 'tap';
import { MEDIA_ID_RANDOM_BYTES, isMediaId, mediaId } from '../../src/core/media-id';

t.test('a media id is the time-ordered id, a hyphen and the random bytes in hex', async (t) => {
  const random = Buffer.from('00112233445566778899aabb', 'hex');
  t.equal(MEDIA_ID_RANDOM_BYTES, 12);
  t.equal(mediaId('383391819158786048', random), '383391819158786048-00112233445566778899aabb');
  t.throws(() => mediaId('1', Buffer.alloc(8)), /12 random bytes, not 8/);
});

t.test('the shapes that name a media file: the current form and the plain ids of older uploads', async (t) => {
  for (const ok of ['383391819158786048-00112233445566778899aabb', '383391819158786048', '1', '9223372036854775807-ffffffffffffffffffffffff']) {
    t.ok(isMediaId(ok), ok);
  }
  for (const bad of [
    '',
    '0',
    '383391819158786048-',
    '383391819158786048-00112233445566778899aab',
    '383391819158786048-00112233445566778899aabbc',
    '383391819158786048-00112233445566778899AABB',
    '-00112233445566778899aabb',
    '9223372036854775808-00112233445566778899aabb',
    '383391819158786048-00112233445566778899aabb.tmp',
    '../383391819158786048',
  ]) {
    t.notOk(isMediaId(bad), JSON.stringify(bad));
  }
});
