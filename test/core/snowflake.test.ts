import t from 'tap';
import { IdGenerator, composeId, composeIdText, decomposeId, isIdString, SNOWFLAKE_EPOCH_MS, MAX_NODE_ID, MAX_SEQUENCE } from '../../src/core/snowflake';

t.test('composeId packs 41 ms bits, 10 node bits, 12 sequence bits', async (t) => {
  t.equal(composeId(SNOWFLAKE_EPOCH_MS, 0, 0), 0n);
  t.equal(composeId(SNOWFLAKE_EPOCH_MS + 1, 0, 0), 4194304n);
  t.equal(composeId(SNOWFLAKE_EPOCH_MS, 1, 0), 4096n);
  t.equal(composeId(SNOWFLAKE_EPOCH_MS, 0, 1), 1n);
  t.equal(composeId(SNOWFLAKE_EPOCH_MS + 1000, 1023, 4095), 4194304000n + 1023n * 4096n + 4095n);
  t.equal(composeId(SNOWFLAKE_EPOCH_MS + 2 ** 41 - 1, 1023, 4095), 2n ** 63n - 1n);
  t.throws(() => composeId(SNOWFLAKE_EPOCH_MS - 1, 0, 0), RangeError);
  t.throws(() => composeId(SNOWFLAKE_EPOCH_MS, 1024, 0), RangeError);
  t.throws(() => composeId(SNOWFLAKE_EPOCH_MS, 0, 4096), RangeError);
});

t.test('decomposeId inverts composeId', async (t) => {
  const id = composeId(Date.UTC(2026, 10, 22, 13, 45, 0, 123), 37, 99);
  t.same(decomposeId(id), { timestampMs: Date.UTC(2026, 10, 22, 13, 45, 0, 123), nodeId: 37, sequence: 99 });
  t.same(decomposeId(id.toString()), { timestampMs: Date.UTC(2026, 10, 22, 13, 45, 0, 123), nodeId: 37, sequence: 99 });
});

t.test('ids within one millisecond use the sequence; a new millisecond resets it', async (t) => {
  let now = SNOWFLAKE_EPOCH_MS + 5000;
  const g = new IdGenerator(3, () => now);
  t.equal(g.next(), (5000n * 4194304n + 3n * 4096n + 0n).toString());
  t.equal(g.next(), (5000n * 4194304n + 3n * 4096n + 1n).toString());
  now += 1;
  t.equal(g.next(), (5001n * 4194304n + 3n * 4096n + 0n).toString());
});

t.test('a clock that steps back never makes ids go backwards', async (t) => {
  let now = SNOWFLAKE_EPOCH_MS + 10_000;
  const g = new IdGenerator(1, () => now);
  const a = g.nextBigInt();
  now -= 5000;
  const b = g.nextBigInt();
  t.ok(b > a, 'later id is larger after clock step back');
  t.same(decomposeId(b), { timestampMs: SNOWFLAKE_EPOCH_MS + 10_000, nodeId: 1, sequence: 1 });
});

t.test('sequence overflow borrows the next millisecond', async (t) => {
  const now = SNOWFLAKE_EPOCH_MS + 777;
  const g = new IdGenerator(2, () => now);
  let last = 0n;
  for (let i = 0; i <= MAX_SEQUENCE; i++) last = g.nextBigInt();
  t.same(decomposeId(last), { timestampMs: now, nodeId: 2, sequence: 4095 });
  const next = g.nextBigInt();
  t.same(decomposeId(next), { timestampMs: now + 1, nodeId: 2, sequence: 0 });
});

t.test('a resumed node starts above the last millisecond of its previous holder', async (t) => {
  const g = new IdGenerator(4, () => SNOWFLAKE_EPOCH_MS + 100, SNOWFLAKE_EPOCH_MS + 500);
  t.same(decomposeId(g.next()), { timestampMs: SNOWFLAKE_EPOCH_MS + 501, nodeId: 4, sequence: 0 });
});

t.test('isIdString accepts decimal 63-bit ids only', async (t) => {
  t.equal(isIdString('382892044143566848'), true);
  t.equal(isIdString('9223372036854775807'), true);
  t.equal(isIdString('9223372036854775808'), false);
  t.equal(isIdString('0123'), false);
  t.equal(isIdString('-1'), false);
  t.equal(isIdString('12a'), false);
  t.equal(isIdString(''), false);
});

t.test('composeIdText is the decimal text of composeId, to the last of the 63 bits', async (t) => {
  const maxMs = SNOWFLAKE_EPOCH_MS + 2 ** 41 - 1;
  const cases: Array<[number, number, number]> = [
    [SNOWFLAKE_EPOCH_MS, 0, 0],
    [SNOWFLAKE_EPOCH_MS, 0, 1],
    [SNOWFLAKE_EPOCH_MS, MAX_NODE_ID, MAX_SEQUENCE],
    [SNOWFLAKE_EPOCH_MS + 1, 0, 0],
    [SNOWFLAKE_EPOCH_MS + 999_999, MAX_NODE_ID, MAX_SEQUENCE],
    [SNOWFLAKE_EPOCH_MS + 1_000_000, 0, 0],
    [maxMs, MAX_NODE_ID, MAX_SEQUENCE],
    [maxMs, 0, 0],
    [Date.UTC(2026, 10, 27), 7, 42],
  ];
  // A fixed pseudo-random walk over the whole range, so that a failure can be replayed.
  let seed = 12345;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  for (let i = 0; i < 2000; i++) {
    const ms = SNOWFLAKE_EPOCH_MS + Math.floor((next(2147483647) / 2147483647) * (2 ** 41 - 1));
    cases.push([ms, next(MAX_NODE_ID + 1), next(MAX_SEQUENCE + 1)]);
  }
  let wrong = 0;
  for (const [ms, node, seq] of cases) if (composeIdText(ms, node, seq) !== composeId(ms, node, seq).toString()) wrong++;
  t.equal(wrong, 0, `${cases.length} ids`);
  t.equal(composeIdText(maxMs, MAX_NODE_ID, MAX_SEQUENCE), ((1n << 63n) - 1n).toString(), 'the largest id');
  t.throws(() => composeIdText(SNOWFLAKE_EPOCH_MS - 1, 0, 0), RangeError, 'before the epoch');
  t.throws(() => composeIdText(SNOWFLAKE_EPOCH_MS, MAX_NODE_ID + 1, 0), RangeError, 'node id too large');
  const a = new IdGenerator(3, () => SNOWFLAKE_EPOCH_MS + 5);
  const b = new IdGenerator(3, () => SNOWFLAKE_EPOCH_MS + 5);
  t.same([a.next(), a.next()], [b.nextBigInt().toString(), b.nextBigInt().toString()], 'next and nextBigInt mint the same ids');
});
