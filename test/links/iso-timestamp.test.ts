// expires_at's reading of ISO 8601: the full form, and the shorter ones ISO 8601 also allows.
import t from 'tap';
import { isoTimestampMs } from '../../src/links/schema';

t.test('full date-times with a zone, with or without seconds and fraction', async (t) => {
  const at = Date.UTC(2027, 0, 1, 9, 30);
  t.equal(isoTimestampMs('2027-01-01T09:30:00.000Z'), at);
  t.equal(isoTimestampMs('2027-01-01T09:30:00Z'), at);
  t.equal(isoTimestampMs('2027-01-01T09:30Z'), at, 'minutes without seconds');
  t.equal(isoTimestampMs('2027-01-01T15:00+05:30'), at, 'an offset');
  t.equal(isoTimestampMs('2027-01-01T15:00:00+0530'), at, 'an offset without its colon');
  t.equal(isoTimestampMs('2027-01-01T04:30:00-05:00'), at);
  t.equal(isoTimestampMs('2027-01-01T09:30:00.25Z'), at + 250);
});

t.test('anything else is not a timestamp', async (t) => {
  for (const s of ['2027-01-01', '2027-01-01T09:30', '2027-01-01T09:30:00', '2027-02-30T09:30Z', '2027-01-01T25:00Z', '2027-13-01T00:00Z', 'tomorrow', '', '1798761600000', '2027-01-01 09:30Z', '2027-01-01t09:30z']) {
    t.ok(Number.isNaN(isoTimestampMs(s)), JSON.stringify(s));
  }
});
