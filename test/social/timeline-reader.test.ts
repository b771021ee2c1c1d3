// The home-timeline reader on real stores: posts committed but not yet fanned out are merged in
// from the outbox, so that a window made meanwhile (a user's first, say) hides none of them.
import t, { type Test } from 'tap';
import { addUsers, groupCommit, tempStore } from '../helpers/store';
import { loadConfig } from '../../src/config';
import { openHotStore } from '../../src/store/lmdb';
import { homeTimelines } from '../../src/social/home-timelines';
import { encodeTimeline } from '../../src/core/timeline-merge';
import { FANOUT_CONSUMER, SocialStore } from '../../src/social/store';
import { COUNTS_TTL_MS, HomeTimelineReader, PAGE_FRESH_MS } from '../../src/social/timeline';
import { localPostMarks } from '../../src/social/post-marks';
import { TOP } from '../../src/core/snowflake';

const now = '2026-01-02T00:00:00.000Z';
const AUTHOR = '2001';
const STRANGER = '2002';
const READER = '2003';

/**
 * A migrated store with these users, its hot store, and `commit`, which commits operations as the
 * writer does and then raises the outbox signal as the writer does after a commit that appended
 * events.
 */
function readerStore(t: Test, prefix: string, users: Record<string, string>) {
  const { dir, db } = tempStore(t, prefix);
  const hot = openHotStore(dir);
  t.teardown(() => hot.close());
  addUsers(db, users, now);
  const group = groupCommit(db);
  const outboxSignal = new Int32Array(1);
  const commit = (...ops: Array<[string, unknown]>) => {
    t.ok(group.commit(ops).every((o) => o.ok), 'committed');
    Atomics.add(outboxSignal, 0, 1);
  };
  return { db, hot, outboxSignal, commit };
}

t.test('posts the fan-out has not reached are in the timeline, above a window that lacks them', async (t) => {
  const { db, hot, outboxSignal, commit } = readerStore(t, 'perch-reader-', { [AUTHOR]: 'author', [STRANGER]: 'stranger', [READER]: 'reader' });
  const post = (id: string, authorId = AUTHOR): [string, unknown] => ['createPost', { id, authorId, text: 'post ' + id, mediaIds: [], replyTo: null, createdAt: now }];
  const fannedOutTo = (seq: number): [string, unknown] => ['advanceConsumer', { name: FANOUT_CONSUMER, seq, now }];
  const reader = new HomeTimelineReader(new SocialStore(db), hot, loadConfig({ env: {} }), outboxSignal, localPostMarks());
  const ids = () => reader.read(READER, TOP, 20).items.map((p) => p.id);

  commit(['follow', { followerId: READER, followeeId: AUTHOR, sinceId: '100', now }]); // event 1
  commit(post('5000')); // event 2
  // The fan-out made the reader's first window at the newest post then (5000) and moved past both
  // events; 5001 was committed while it did so, so it is in neither the window nor SQLite's part.
  homeTimelines(hot).putSync(READER, encodeTimeline(5000n, []));
  commit(fannedOutTo(2));
  commit(post('5001'), post('7000', STRANGER)); // events 3 and 4, not fanned out yet
  t.same(ids(), ['5001', '5000'], 'the unfanned post shows, the stranger\'s does not');

  // The fan-out reaches it: in the window now, and still shown once.
  homeTimelines(hot).putSync(READER, encodeTimeline(5000n, [5001n]));
  commit(fannedOutTo(4));
  t.same(ids(), ['5001', '5000']);
  commit(post('5002'));
  t.same(ids(), ['5002', '5001', '5000'], 'a new post shows before its fan-out');
  t.same(reader.read(READER, 5002n, 1).items.map((p) => p.id), ['5001'], 'paging below it');
});

t.test('caches far smaller than a page: every live post still shows, none is taken for deleted', async (t) => {
  const { db, hot, outboxSignal, commit } = readerStore(t, 'perch-reader-small-', { [AUTHOR]: 'author', [READER]: 'reader' });
  const post = (id: number): [string, unknown] => ['createPost', { id: String(id), authorId: AUTHOR, text: 'post ' + id, mediaIds: [], replyTo: null, createdAt: now }];
  // Generations of 3 entries: every refresh of a page retires several of them as it writes.
  const reader = new HomeTimelineReader(new SocialStore(db), hot, loadConfig({ env: {} }), outboxSignal, localPostMarks(), undefined, 3);
  commit(['follow', { followerId: READER, followeeId: AUTHOR, sinceId: '100', now }]);
  const made: number[] = [];
  for (let id = 5000; id < 5030; id++) {
    commit(post(id));
    made.unshift(id);
  }
  const newest = (n: number) => made.slice(0, n).map(String);
  t.same(reader.read(READER, TOP, 20).items.map((p) => p.id), newest(20), 'the first page, whole');
  for (let id = 5030; id < 5040; id++) {
    commit(post(id));
    made.unshift(id);
    t.same(reader.read(READER, TOP, 20).items.map((p) => p.id), newest(20), `after post ${id}: the newest 20, whole`);
  }
  t.same(reader.read(READER, BigInt(made[19]), 25).items.map((p) => p.id), made.slice(20, 40).map(String), 'and the page below');
  t.same(reader.read(READER, TOP, 40).items.map((p) => p.id), newest(40), 'every post, read again from caches that kept few');
});

t.test("a new post this thread wrote is shown from what it sent, without SQLite; its counts are read again a second after", async (t) => {
  const { db, hot, outboxSignal, commit } = readerStore(t, 'perch-reader-expected-', { [AUTHOR]: 'author', [READER]: 'reader' });
  const store = new SocialStore(db);
  const hydrated: string[] = [];
  const hydrate = store.hydrate.bind(store);
  store.hydrate = (ids) => (hydrated.push(...ids.map(String)), hydrate(ids));
  const reader = new HomeTimelineReader(store, hot, loadConfig({ env: {} }), outboxSignal, localPostMarks());
  const write = (id: string, at = performance.now()) => {
    const post = { id, text: 'post ' + id, author_id: AUTHOR, media_ids: [] as string[], reply_to: null, created_at: now };
    reader.expectPost(post, at);
    commit(['createPost', { id, authorId: AUTHOR, text: post.text, mediaIds: [], replyTo: null, createdAt: now }]);
  };
  const page = () => reader.read(READER, TOP, 20).items.map((p) => [p.id, p.text, p.author.handle, p.like_count]);
  commit(['follow', { followerId: READER, followeeId: AUTHOR, sinceId: '100', now }]);
  write('5000');
  t.same(page(), [['5000', 'post 5000', 'author', 0]]);
  t.same(hydrated, ['5000'], "the author's first post is read from SQLite: the reader learns the handle there (and the post was sent before this thread served a read, so it was not kept)");

  write('5001');
  commit(['like', { userId: READER, postId: '5001', now }]);
  t.same(page(), [['5001', 'post 5001', 'author', 0], ['5000', 'post 5000', 'author', 0]], 'shown with the counts of a new post');
  t.same(hydrated, ['5000'], 'without asking SQLite');

  write('5002', performance.now() - 900);
  // Sent 900 ms before now, read 200 ms after now: 1,100 ms after it was sent.
  const inASecond = performance.now() + 200;
  const realNow = performance.now;
  performance.now = () => inASecond;
  try {
    t.same(page()[0], ['5002', 'post 5002', 'author', 0]);
  } finally {
    performance.now = realNow;
  }
  t.same(hydrated, ['5000', '5002'], 'one sent longer ago than the counts may lag is read from SQLite');

  write('5003');
  commit(['deletePost', { userId: AUTHOR, postId: '5003', now }]);
  reader.dropPost('5003');
  t.same(page().map((p) => p[0]), ['5002', '5001', '5000'], 'a deleted one is not shown');

  // Its counts, as any post's, are read again once a second has passed since it was sent.
  const later = performance.now() + 1500;
  performance.now = () => later;
  try {
    t.same(page()[1], ['5001', 'post 5001', 'author', 1], 'the like shows a second later');
  } finally {
    performance.now = realNow;
  }
});

t.test('a page is served again for a moment, unless its reader posted, a post was deleted or their follows changed', async (t) => {
  const { db, hot, outboxSignal, commit } = readerStore(t, 'perch-reader-fresh-', { [AUTHOR]: 'author', [STRANGER]: 'stranger', [READER]: 'reader' });
  const marks = localPostMarks();
  const reader = new HomeTimelineReader(new SocialStore(db), hot, loadConfig({ env: {} }), outboxSignal, marks);
  const post = (id: string, authorId = AUTHOR) =>
    commit(['createPost', { id, authorId, text: 'post ' + id, mediaIds: [], replyTo: null, createdAt: now }]);
  // A whole number of milliseconds, so that the steps below add up exactly: from a fractional
  // start, 99 and then 1 more can come to a hair under 100, and the page stays fresh.
  let clock = Math.floor(performance.now());
  const realNow = performance.now;
  performance.now = () => clock;
  t.teardown(() => (performance.now = realNow));
  const page = (limit = 20) => JSON.parse(reader.readBody(READER, TOP, limit, () => null).toString()) as { items: Array<{ id: string; like_count: number }> };
  const ids = (limit = 20) => page(limit).items.map((p) => p.id);

  commit(['follow', { followerId: READER, followeeId: AUTHOR, sinceId: '100', now }]);
  post('5000');
  t.same(ids(), ['5000']);
  post('5001');
  clock += PAGE_FRESH_MS - 1;
  t.same(ids(), ['5000'], "a followed author's new post may wait until the page is made again");
  clock += 1;
  t.same(ids(), ['5001', '5000'], `made again once ${PAGE_FRESH_MS} ms old`);

  post('5002');
  t.same(ids(2), ['5002', '5001'], 'another request is answered afresh');

  // One's own post: the mark moves once it is durable, before its 201, and the next read shows it.
  post('5003', READER);
  t.same(ids(2), ['5002', '5001'], 'an own post whose mark has not moved yet is not looked for');
  marks.posted(READER);
  t.same(ids(2), ['5003', '5002'], 'its mark moved: made again at once');
  marks.posted(STRANGER);
  post('5004');
  t.same(ids(2), ['5003', '5002'], "another author's mark leaves the page (unless they share a slot)");

  // A deletion and an unfollow: gone from the next read, served again or not.
  commit(['deletePost', { userId: READER, postId: '5003', now }]);
  reader.dropPost('5003');
  t.same(ids(2), ['5004', '5002'], 'a deleted post is gone at once');
  commit(['unfollow', { followerId: READER, followeeId: AUTHOR, now }]);
  reader.followsChanged(READER);
  t.same(ids(2), [], 'an unfollowed author is gone at once');

  // Counts: a page served again shows counts at most COUNTS_TTL_MS old.
  commit(['follow', { followerId: READER, followeeId: STRANGER, sinceId: '100', now }]);
  reader.followsChanged(READER);
  post('6000', STRANGER);
  const made = clock;
  t.same(page().items.map((p) => [p.id, p.like_count]), [['6000', 0]]);
  commit(['like', { userId: READER, postId: '6000', now }]);
  for (let at = made; at <= made + COUNTS_TTL_MS; at += PAGE_FRESH_MS / 2) {
    clock = at;
    const likes = page().items[0].like_count;
    if (clock - made >= COUNTS_TTL_MS) t.equal(likes, 1, 'the like shows once the counts are a second old');
  }
});

t.test("a page's body is the bytes JSON.stringify gives for the items read() answers", async (t) => {
  const { db, hot, outboxSignal, commit } = readerStore(t, 'perch-reader-json-', { [AUTHOR]: 'author', [READER]: 'reader' });
  const reader = new HomeTimelineReader(new SocialStore(db), hot, loadConfig({ env: {} }), outboxSignal, localPostMarks());
  const post = (id: string, text: string, mediaIds: string[], replyTo: string | null) => ({ id, authorId: AUTHOR, text, mediaIds, replyTo, createdAt: now });
  commit(['follow', { followerId: READER, followeeId: AUTHOR, sinceId: '100', now }]);
  commit(['createPost', post('5000', 'plain', [], null)]);
  commit(['createPost', post('5001', 'quotes " and \\ and \n new line, \u2028, é, 🐦, <tag>', [], '5000')]);
  t.same(reader.read(READER, TOP, 20).items.map((p) => p.id), ['5001', '5000'], 'read once: the author\'s handle is known');
  // One the reader's thread sent itself: its fields come from what was sent, not from SQLite.
  const sent = post('5002', 'sent from this thread: "quoted"', [], '5001');
  reader.expectPost({ id: sent.id, text: sent.text, author_id: AUTHOR, media_ids: sent.mediaIds, reply_to: sent.replyTo, created_at: now });
  commit(['createPost', sent]);
  const read = reader.read(READER, TOP, 20);
  t.same(read.items.map((p) => p.id), ['5002', '5001', '5000']);
  const body = reader.readBody(READER, TOP, 20, () => null).toString();
  t.equal(body, JSON.stringify({ items: read.items, next_cursor: null }));
});
