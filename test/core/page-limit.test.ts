import t from 'tap';
import { DEFAULT_LIMIT, MAX_LIMIT, parseLimit } from '../../src/core/page-limit';

t.test('limit: absent is the default, 1 to 100 pass, anything else is NaN', async (t) => {
  t.equal(parseLimit(null), DEFAULT_LIMIT);
  t.equal(DEFAULT_LIMIT, 20);
  t.equal(MAX_LIMIT, 100);
  for (const [raw, n] of [['1', 1], ['20', 20], ['100', 100], ['007', 7], ['0100', 100], ['0000000001', 1]] as const) t.equal(parseLimit(raw), n, raw);
  for (const raw of ['', '0', '101', '00000000000100', '-1', '+5', '1.5', '1e2', ' 5', '5 ', 'abc', '0x10', '９']) t.ok(Number.isNaN(parseLimit(raw)), JSON.stringify(raw));
});
