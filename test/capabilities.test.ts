// The one list of capabilities, checked as the server reads it: names of write operations, pool
// tasks, signals and migrations are each used once; every outbox consumer's task exists; and
// migrations form one sequence from 1.
import t from 'tap';
import { Signals } from '../src/server/signals';
import { CAPABILITIES, allMigrations, allTasks, signalLayout, writerSetup } from '../src/capabilities';
import { migrationList } from '../src/store/migration';
import { writeExecutor } from '../src/writer/operations';
import { tempStore } from './helpers/store';

t.test('capability names are unique, and the outbox module comes first', async (t) => {
  const names = CAPABILITIES.map((c) => c.name);
  t.same([...new Set(names)], names);
  t.equal(names[0], 'outbox');
  t.ok(names.includes('social') && names.includes('links') && names.includes('media') && names.includes('accounts'));
});

t.test('every write operation has one name, and the executor binds them all', async (t) => {
  const { db } = tempStore(t, 'perch-capabilities-');
  const names = CAPABILITIES.flatMap((c) => (c.writes ? Object.keys(c.writes(db)) : []));
  t.same([...new Set(names)].sort(), [...names].sort(), 'no name twice');
  for (const name of ['createPost', 'insertLink', 'insertMedia', 'advanceConsumer', 'pruneOutbox', 'indexAuthorPosts']) t.ok(names.includes(name), name);
  const exec = writeExecutor(db, writerSetup().writes);
  t.throws(() => exec('noSuchOperation', {}), /unknown write operation noSuchOperation/);
  t.throws(() => writeExecutor(db, [...writerSetup().writes, ...writerSetup().writes]), /two write operations are named/);
});

t.test('pool tasks: unique names, and every consumer runs one that exists', async (t) => {
  const tasks = allTasks();
  t.ok('social.fanout' in tasks && 'links.drainClicks' in tasks);
  for (const c of CAPABILITIES) {
    for (const consumer of c.consumers ?? []) {
      t.equal(typeof tasks[consumer.task], 'function', `${consumer.name} runs ${consumer.task}`);
      t.equal(consumer.tasks[consumer.task], tasks[consumer.task]);
    }
  }
});

t.test('signals and migrations', async (t) => {
  t.same(
    signalLayout(),
    [['outbox', 1], ['outbox:notification_delivery', 1], ['outbox:notifications', 1], ['social.post-marks', 4096], ['search.queued', 1]],
    'a signal takes one slot, a bank its size',
  );
  const signals = Signals.allocate(signalLayout());
  t.equal(signals.buffer.byteLength, 4100 * 4);
  t.equal(signals.counter('social.post-marks').length, 4096);
  t.equal(signals.counter('outbox').length, 1);
  signals.raise('outbox');
  t.equal(signals.counter('outbox')[0], 1);
  t.same([...new Set(signals.counter('social.post-marks'))], [0], 'the bank before it holds its own slots');
  t.throws(() => signals.counter('nothing'), /no signal named nothing/);
  const versions = allMigrations().map((m) => m.version);
  t.same(versions, versions.map((_, i) => i + 1), 'one sequence from 1, no gap');
  t.throws(() => migrationList([{ version: 7, name: 'a', sql: '' }], [{ version: 7, name: 'b', sql: '' }]), /two migrations have version 7: a, b/);
});
