// The web client's rules for live notifications: dedupe by (id, updated_at), the reconnection
// delays, and how a notification reads.
import t from 'tap';
import { loadWebModule } from './web-module';

// The shapes used here, declared rather than imported: the server's compiler must not take the
// client's source into its program (it would emit it into dist/web, the client's build).
interface Stamp {
  id: string;
  updated_at: string;
}
interface Rules {
  SeenNotifications: new () => { note(items: Stamp[]): void; isNew(n: Stamp): boolean; clear(): void };
  reconnectDelayMs(attempt: number, random: number): number;
}
interface Text {
  notificationSentence(n: { type: 'like' | 'reply' | 'follow'; actor_count: number }, handles: (string | null)[]): string;
  excerpt(text: string, max?: number): string;
}
const rules = loadWebModule<Rules>('src/notification-rules.ts');
const text = loadWebModule<Text>('src/notification-text.ts');

const at = (ms: number) => new Date(Date.UTC(2026, 10, 24, 12, 0, 0, ms)).toISOString();

t.test('a message is news only when its updated_at is newer than any seen for its id', async (t) => {
  const seen = new rules.SeenNotifications();
  t.equal(seen.isNew({ id: '7', updated_at: at(100) }), true, 'first sight');
  t.equal(seen.isNew({ id: '7', updated_at: at(100) }), false, 'the same (id, updated_at) again: a duplicate');
  t.equal(seen.isNew({ id: '7', updated_at: at(99) }), false, 'an older state arriving late');
  t.equal(seen.isNew({ id: '7', updated_at: at(101) }), true, 'a newer state: a new actor joined');
  t.equal(seen.isNew({ id: '8', updated_at: at(50) }), true, 'another id is its own');
  // Times of one format compare as strings, across every digit that changes.
  t.equal(seen.isNew({ id: '7', updated_at: '2026-11-24T12:00:01.000Z' }), true);
  t.equal(seen.isNew({ id: '7', updated_at: '2026-11-24T12:00:00.999Z' }), false);
});

t.test('what the list showed is not news when the socket brings it', async (t) => {
  const seen = new rules.SeenNotifications();
  seen.note([{ id: '1', updated_at: at(10) }, { id: '2', updated_at: at(20) }]);
  t.equal(seen.isNew({ id: '1', updated_at: at(10) }), false);
  t.equal(seen.isNew({ id: '2', updated_at: at(21) }), true);
  seen.note([{ id: '2', updated_at: at(20) }]);
  t.equal(seen.isNew({ id: '2', updated_at: at(21) }), false, 'an older list does not move a newer state back');
  seen.clear();
  t.equal(seen.isNew({ id: '1', updated_at: at(10) }), true, 'cleared when signing out');
});

t.test('reconnection waits double from 1 s to at most 30 s, half of each wait random', async (t) => {
  t.same([0, 1, 2, 3, 4, 5, 6].map((a) => rules.reconnectDelayMs(a, 0)), [500, 1000, 2000, 4000, 8000, 15000, 15000]);
  t.same([0, 1, 2, 3, 4, 5, 6].map((a) => rules.reconnectDelayMs(a, 0.999999)), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  t.equal(rules.reconnectDelayMs(1000, 0.5), 22500, 'a long outage stays at the cap');
});

t.test('how a notification reads', async (t) => {
  t.equal(text.notificationSentence({ type: 'like', actor_count: 1 }, ['bob']), '@bob liked your post');
  t.equal(text.notificationSentence({ type: 'like', actor_count: 2 }, ['carol', 'bob']), '@carol and @bob liked your post');
  t.equal(text.notificationSentence({ type: 'reply', actor_count: 3 }, ['carol', 'bob']), '@carol and 2 others replied to your post');
  t.equal(text.notificationSentence({ type: 'follow', actor_count: 2 }, ['dan', 'erin']), '@dan and @erin followed you');
  t.equal(text.notificationSentence({ type: 'follow', actor_count: 2 }, [null, 'erin']), 'someone and @erin followed you', 'an actor not found');
  t.equal(text.notificationSentence({ type: 'like', actor_count: 2 }, ['bob']), '@bob and 1 other liked your post');
  t.equal(text.excerpt('  short\n text '), 'short text');
  t.equal(text.excerpt('é'.repeat(100), 10), 'é'.repeat(9) + '…', 'cut by code points, with an ellipsis');
  t.equal(text.excerpt('😀'.repeat(10), 10), '😀'.repeat(10), 'astral characters count once');
});
