import t from 'tap';
import { isoNow } from '../../src/core/clock';

t.test('isoNow is the current time in ISO 8601, made again when the millisecond changes', async (t) => {
  const before = Date.now();
  const first = isoNow();
  const after = Date.now();
  t.match(first, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const ms = Date.parse(first);
  t.ok(ms >= before && ms <= after, 'within the call');
  const end = Date.now() + 5;
  while (Date.now() < end) {
    // Spin into a later millisecond.
  }
  const later = isoNow();
  t.ok(Date.parse(later) >= end, 'a later millisecond gives a later time');
});
