import t from 'tap';
import { baseContentType, isMediaType, sniffMediaType } from '../../src/core/media-type';

t.test('magic bytes of the four accepted types', async (t) => {
  t.equal(sniffMediaType(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])), 'image/png');
  t.equal(sniffMediaType(Buffer.from([0xff, 0xd8, 0xff, 0xe0])), 'image/jpeg');
  t.equal(sniffMediaType(Buffer.from('GIF89a...')), 'image/gif');
  t.equal(sniffMediaType(Buffer.from('GIF87a...')), 'image/gif');
  t.equal(sniffMediaType(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1')), 'image/webp');
  t.equal(sniffMediaType(Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt ', 'latin1')), null);
  t.equal(sniffMediaType(Buffer.from('<svg></svg>')), null);
  t.equal(sniffMediaType(Buffer.alloc(0)), null);
  t.equal(sniffMediaType(Buffer.from([0x89, 0x50])), null);
});

t.test('content types are compared without parameters and case', async (t) => {
  t.equal(baseContentType('Image/PNG; charset=binary'), 'image/png');
  t.equal(isMediaType('image/png'), true);
  t.equal(isMediaType('image/svg+xml'), false);
});
