// Post marks: a shared bank of counters, a slot per hash of an author's id.
import t from 'tap';
import { PostMarks, localPostMarks, slotOf } from '../../src/social/post-marks';

t.test('an author\'s mark moves when they post, in memory another thread sees', async (t) => {
  const bank = new Int32Array(new SharedArrayBuffer(64 * 4));
  const marks = new PostMarks(bank);
  const other = new PostMarks(new Int32Array(bank.buffer));
  t.equal(marks.of('383789344978116608'), 0);
  marks.posted('383789344978116608');
  marks.posted('383789344978116608');
  t.equal(other.of('383789344978116608'), 2, 'the same slot, seen through another view of the bank');
  t.equal(bank.reduce((a, b) => a + b, 0), 2, 'one slot moved');
});

t.test('ids minted one after another spread over the slots', async (t) => {
  const slots = 4096;
  const used = new Set<number>();
  const base = 383789344978116608n;
  for (let i = 0n; i < 1000n; i++) used.add(slotOf((base + i).toString()) & (slots - 1));
  t.ok(used.size > 800, `1,000 consecutive ids in ${used.size} slots`);
  t.equal(slotOf('2002'), slotOf('2002'), 'the same id, the same slot');
});

t.test('the bank must have a power of two of slots', async (t) => {
  t.throws(() => new PostMarks(new Int32Array(new SharedArrayBuffer(12))), /power of two/);
  t.throws(() => new PostMarks(new Int32Array(0)), /power of two/);
  t.equal(localPostMarks(8).of('1'), 0);
});
