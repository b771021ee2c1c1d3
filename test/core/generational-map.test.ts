import t from 'tap';
import { GenerationalMap } from '../../src/core/generational-map';

t.test('holds at most two generations, and keeps what is read', async (t) => {
  const m = new GenerationalMap<string, number>(3);
  m.set('a', 1);
  m.set('b', 2);
  t.equal(m.size, 2);
  m.set('c', 3); // the young generation is full: it becomes the old one
  t.equal(m.size, 3);
  t.equal(m.get('a'), 1, 'an old entry is still found');
  m.set('d', 4);
  m.set('e', 5); // young: a, d, e -> old; b and c are dropped
  t.equal(m.size, 3);
  t.equal(m.get('b'), undefined, 'not read for a whole generation: gone');
  t.equal(m.get('c'), undefined);
  t.same([m.get('a'), m.get('d'), m.get('e')], [1, 4, 5], 'read in the last generation: kept');
});

t.test('set, delete and clear act on both generations; undefined and null values are held', async (t) => {
  const m = new GenerationalMap<string, number | null | undefined>(2);
  m.set('x', null);
  m.set('y', undefined); // -> old
  t.equal(m.get('x'), null, 'a null value is a value');
  t.ok(m.has('y'), 'an undefined value is held too');
  m.set('y', 7);
  t.equal(m.get('y'), 7, 'set replaces an old entry');
  t.equal(m.size, 2, 'without holding it twice');
  m.delete('x');
  t.equal(m.has('x'), false);
  m.clear();
  t.equal(m.size, 0);
  t.throws(() => new GenerationalMap(0), /at least one entry/);
});
