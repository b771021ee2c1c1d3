import t from 'tap';
import { decide, defaultPreferences, stampOf, suppression, withActor, type Action } from '../../src/core/notifications';

const like = (actorId: string, recipientId = 'r', postId = '10'): Action => ({ type: 'like', actorId, recipientId, postId });
const HOUR = 3_600_000;

t.test('suppression: self, disabled types, muted threads', async (t) => {
  const prefs = defaultPreferences();
  t.equal(suppression(like('r'), prefs, ['10']), 'self', 'acting on oneself never notifies');
  t.equal(suppression(like('a'), prefs, ['10']), null);
  t.equal(suppression(like('a'), { ...prefs, types: { like: false, reply: true, follow: true } }, ['10']), 'type_disabled');
  t.equal(suppression({ type: 'follow', actorId: 'a', recipientId: 'r', postId: null }, { ...prefs, types: { like: false, reply: true, follow: true } }, []), null);
  const muted = { ...prefs, muted_post_ids: ['7'] };
  t.equal(suppression(like('a', 'r', '10'), muted, ['10', '8', '7']), 'muted', 'a post under the muted one');
  t.equal(suppression(like('a', 'r', '7'), muted, ['7']), 'muted', 'the muted post itself');
  t.equal(suppression(like('a', 'r', '10'), muted, ['10', '8']), null, 'another thread');
  t.equal(suppression(like('r', 'r', '7'), muted, ['7']), 'self', 'self wins over the rest');
});

t.test('decide: the window counts from the row\'s creation', async (t) => {
  const at = Date.parse('2026-11-22T13:00:00.000Z');
  t.same(decide(false, null, at, HOUR), { kind: 'create', priority: false }, 'no row yet');
  t.same(decide(false, { createdAtMs: at - HOUR + 1, hasActor: false }, at, HOUR), { kind: 'join' }, 'one ms inside');
  t.same(decide(false, { createdAtMs: at - HOUR, hasActor: false }, at, HOUR), { kind: 'create', priority: false }, 'exactly one window old: outside');
  t.same(decide(false, { createdAtMs: at, hasActor: false }, at, 0), { kind: 'create', priority: false }, 'a zero window never aggregates');
});

t.test('decide: repeated actors and priority actors', async (t) => {
  const at = 1_000_000;
  const group = { createdAtMs: at - 10, hasActor: true };
  // The type does not enter into it: each of these is a new action with the row's key.
  for (const repeat of ['a like again after an unlike is a new action: the row moves, counted once', 'a follow again after an unfollow', 'a second reply']) {
    t.same(decide(false, group, at, HOUR), { kind: 'refresh' }, repeat);
  }
  t.same(decide(false, { createdAtMs: at - HOUR, hasActor: true }, at, HOUR), { kind: 'create', priority: false }, 'past the window, a new row even for an actor of the old one');
  t.same(decide(true, { createdAtMs: at - 10, hasActor: false }, at, HOUR), { kind: 'create', priority: true }, 'priority actors are never aggregated');
  t.same(decide(true, null, at, HOUR), { kind: 'create', priority: true }, 'not even with themselves');
});

t.test('withActor: newest first, no duplicates, capped', async (t) => {
  t.same(withActor([], 'a'), ['a']);
  t.same(withActor(['b', 'a'], 'c'), ['c', 'b', 'a']);
  t.same(withActor(['c', 'b', 'a'], 'a'), ['a', 'c', 'b'], 'a repeated actor moves to the front');
  t.same(withActor(['c', 'b', 'a'], 'd', 3), ['d', 'c', 'b'], 'the oldest falls off past the cap');
  t.same(withActor(['c', 'b', 'a'], 'b', 3), ['b', 'c', 'a']);
});

t.test('stampOf never goes back before the recipient\'s latest change', async (t) => {
  t.equal(stampOf(1000, null), 1000);
  t.equal(stampOf(1000, 999), 1000);
  t.equal(stampOf(1000, 1003), 1003);
});
