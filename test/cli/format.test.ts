import t from 'tap';
import { alignColumns, humanDuration, printable } from '../../src/cli/format';
import { humanBytes } from '../../src/core/human-bytes';

t.test('columns line up; the last one is not padded', async (t) => {
  t.same(alignColumns([['data directory', '/srv/perch'], ['server', 'not running'], ['links code_pool_size', '10000']]), [
    'data directory        /srv/perch',
    'server                not running',
    'links code_pool_size  10000',
  ]);
  t.same(alignColumns([['KEY ID', 'USER', 'STATE'], ['key_1', '@alice_long', 'active'], ['key_22', '@b', 'revoked']]), [
    'KEY ID  USER         STATE',
    'key_1   @alice_long  active',
    'key_22  @b           revoked',
  ]);
  t.same(alignColumns([]), []);
});

t.test('sizes and durations', async (t) => {
  t.equal(humanBytes(0), '0 B');
  t.equal(humanBytes(1023), '1023 B');
  t.equal(humanBytes(1024), '1.0 KiB');
  t.equal(humanBytes(1536), '1.5 KiB');
  t.equal(humanBytes(5 * 1024 * 1024), '5.0 MiB');
  t.equal(humanBytes(3.25 * 1024 ** 3), '3.3 GiB');
  t.equal(humanDuration(0), '0s');
  t.equal(humanDuration(59.9), '59s');
  t.equal(humanDuration(65), '1m 05s');
  t.equal(humanDuration(2 * 3600 + 7 * 60 + 5), '2h 07m');
  t.equal(humanDuration(4 * 86400 + 3 * 3600), '4d 03h');
  t.equal(humanDuration(-3), '0s');
});

t.test('text from a file is printed without its control characters', async (t) => {
  t.equal(printable('ok1\u001b[2J\u001b[31mFAKE\nline\u009b'), 'ok1\\u001b[2J\\u001b[31mFAKE\\u000aline\\u009b');
  t.equal(printable('plain – text ✓'), 'plain – text ✓', 'printable characters are left as they are');
});
