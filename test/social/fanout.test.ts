// The fan-out task run directly on a store: a post pushed to its followers, and the follow race —
// a post minted after a follow was requested but committed (and fanned out) before that follow —
// repaired when the follow's own event is fanned out. Older posts are never backfilled; a user's
// first value is read from SQLite.
import t, { type Test } from 'tap';
import { addUsers, groupCommit, tempStore } from '../helpers/store';
import { loadConfig } from '../../src/config';
import { openHotStore } from '../../src/store/lmdb';
import { fanoutTask, firstWindow } from '../../src/social/fanout';
import { SocialStore } from '../../src/social/store';
import { dropShortWindows, homeTimelines, windowCovers } from '../../src/social/home-timelines';
import { decodeTimeline, encodeTimeline } from '../../src/core/timeline-merge';
import type { TaskContext } from '../../src/workers/context';

type Op = [string, unknown];

const now = '2026-01-02T00:00:00.000Z';
const AUTHOR = '1001';
const LATE = '1002'; // follows just before the author's post is minted, commits after it
const EARLY = '1003'; // followed long before
const NEWCOMER = '1004'; // follows after the post was made: no backfill

/** `windows`: whether the users start with a precomputed (empty) timeline, as an active user has. */
function setUp(t: Test, celebrityFollowers = 10_000, windows = true) {
  const { dir, db: sqlite } = tempStore(t, 'perch-fanout-');
  const hot = openHotStore(dir);
  // Closed before the store's own teardown removes the directory (teardowns run last first).
  t.teardown(() => hot.close());
  addUsers(sqlite, Object.fromEntries([AUTHOR, LATE, EARLY, NEWCOMER].map((id) => [id, 'u' + id])), now);
  if (windows) for (const id of [AUTHOR, LATE, EARLY, NEWCOMER]) homeTimelines(hot).putSync(id, encodeTimeline(0n, []));
  const config = loadConfig({ env: {}, overrides: { social: { celebrity_followers: celebrityFollowers, timeline_cap: 800 } } });
  const ctx: TaskContext = { config, dataDir: dir, sqlite, hot };
  const group = groupCommit(sqlite);
  const commit = (...ops: Op[]) => t.ok(group.commit(ops).every((o) => o.ok), 'committed');
  let done = 0;
  /** Fans out every event committed since the last call, as the dispatcher would. */
  const fanOut = async () => {
    const upTo = sqlite.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck().get() as number;
    const result = await fanoutTask(ctx, { after: done, upTo });
    done = upTo;
    return result;
  };
  /** Runs every event so far through the task again, as a restart after a crash may. */
  const replay = () => fanoutTask(ctx, { after: 0, upTo: done });
  const timeline = (userId: string) => {
    const buf = homeTimelines(hot).getBinary(userId);
    return buf ? decodeTimeline(buf).ids.map(String) : [];
  };
  const floor = (userId: string) => {
    const buf = homeTimelines(hot).getBinary(userId);
    return buf ? String(decodeTimeline(buf).floor) : null;
  };
  return { commit, fanOut, replay, timeline, floor, sqlite, fanOutRange: (after: number, upTo: number) => fanoutTask(ctx, { after, upTo }) };
}

const follow = (followerId: string, sinceId: string): Op => ['follow', { followerId, followeeId: AUTHOR, sinceId, now }];
const post = (id: string): Op => ['createPost', { id, authorId: AUTHOR, text: 'post ' + id, mediaIds: [], replyTo: null, createdAt: now }];

t.test('a post committed before a follow that was requested earlier reaches the follower with the follow', async (t) => {
  const { commit, fanOut, replay, timeline } = setUp(t);
  commit(follow(EARLY, '100'));
  // The author posts 5000; LATE's follow was requested at 4000 but its commit comes after the
  // post's, and the post is fanned out in between.
  commit(post('5000'));
  t.same(await fanOut(), { posts: 1, follows: 1, timelines: 2 });
  t.same(timeline(EARLY), ['5000']);
  t.same(timeline(LATE), [], 'the follow is not visible yet');

  commit(follow(LATE, '4000'), follow(NEWCOMER, '6000'));
  t.same(await fanOut(), { posts: 0, follows: 2, timelines: 1 });
  t.same(timeline(LATE), ['5000'], 'the follow brought the post newer than it');
  t.same(timeline(NEWCOMER), [], 'a follow does not backfill older posts');

  commit(post('7000'));
  t.same(await fanOut(), { posts: 1, follows: 0, timelines: 4 });
  t.same(timeline(LATE), ['5000', '7000']);
  t.same(timeline(NEWCOMER), ['7000']);
  t.same(timeline(EARLY), ['5000', '7000']);
  t.same(timeline(AUTHOR), ['5000', '7000']);

  const replayed = await replay();
  t.same(replayed, { posts: 2, follows: 3, timelines: 4 }, 'a replayed range is processed again');
  for (const user of [LATE, EARLY, AUTHOR]) t.same(timeline(user), ['5000', '7000'], `and changes nothing (${user})`);
  t.same(timeline(NEWCOMER), ['7000']);
});

t.test("a follow of a celebrity pushes nothing: the celebrity's posts are pulled at read time", async (t) => {
  const { commit, fanOut, timeline } = setUp(t, 0);
  commit(post('5000'));
  await fanOut();
  commit(follow(LATE, '4000'));
  t.same(await fanOut(), { posts: 0, follows: 0, timelines: 0 });
  t.same(timeline(LATE), []);
});

t.test('a follow already undone when the task runs pushes nothing', async (t) => {
  const { commit, fanOut, timeline } = setUp(t);
  commit(post('5000'));
  await fanOut();
  commit(follow(LATE, '4000'), ['unfollow', { followerId: LATE, followeeId: AUTHOR, now }]);
  t.same(await fanOut(), { posts: 0, follows: 0, timelines: 0 });
  t.same(timeline(LATE), []);
});

t.test("an author once pulled is not pushed to followers below the threshold either: readers pull the posts", async (t) => {
  const { commit, fanOut, timeline, sqlite } = setUp(t);
  commit(follow(EARLY, '100'));
  sqlite.prepare('INSERT INTO pull_authors (author_id, marked_at) VALUES (?, ?)').run(AUTHOR, now);
  commit(post('5000'));
  t.same(await fanOut(), { posts: 1, follows: 0, timelines: 1 });
  t.same(timeline(AUTHOR), ['5000'], "the author's own timeline has it");
  t.same(timeline(EARLY), [], 'the follower reads it through the pull path');
});

t.test("a user's first value is read from SQLite: their timeline as it stands, floor 0 when whole", async (t) => {
  const { commit, fanOut, timeline, floor } = setUp(t, 10_000, false);
  commit(post('50')); // before EARLY's follow: never theirs
  commit(follow(EARLY, '100'));
  commit(['createPost', { id: '120', authorId: EARLY, text: 'my own', mediaIds: [], replyTo: null, createdAt: now }]);
  // Two posts committed before the fan-out runs, so a reader without a value has seen both (from
  // SQLite); the task below covers only the first.
  commit(post('5000'));
  const first = await fanOut();
  t.same(first, { posts: 3, follows: 1, timelines: 2 });
  t.same(timeline(EARLY), ['120', '5000'], 'their own post and the followed author\'s since the follow');
  t.equal(floor(EARLY), '0', 'the whole timeline: reads never go to SQLite for it');
  t.same(timeline(AUTHOR), ['50', '5000']);
  commit(post('5001'));
  await fanOut();
  t.same(timeline(EARLY), ['120', '5000', '5001'], 'later posts are pushed as usual');
  t.equal(floor(EARLY), '0');
});

t.test('a first value made after newer posts were committed does not hide them', async (t) => {
  const { commit, fanOutRange, timeline, floor } = setUp(t, 10_000, false);
  commit(follow(EARLY, '100')); // event 1
  commit(post('5000')); // event 2
  // Committed before the task below runs, though in the range of a later task.
  commit(post('5001')); // event 3
  t.same(await fanOutRange(0, 2), { posts: 1, follows: 1, timelines: 2 });
  t.same(timeline(EARLY), ['5000', '5001'], 'SQLite showed 5001 too: it is in the first value');
  t.equal(floor(EARLY), '0');
  await fanOutRange(2, 3);
  t.same(timeline(EARLY), ['5000', '5001'], 'its own turn changes nothing');
});

t.test('a first value: the newest of the timeline under the cap, without deleted posts or pulled authors', async (t) => {
  const { commit, sqlite } = setUp(t, 10_000, false);
  commit(follow(EARLY, '100'), ['follow', { followerId: EARLY, followeeId: LATE, sinceId: '100', now }]);
  for (const id of ['5001', '5002', '5003', '5004']) commit(post(id));
  commit(['createPost', { id: '5005', authorId: LATE, text: 'by late', mediaIds: [], replyTo: null, createdAt: now }]);
  commit(['deletePost', { userId: AUTHOR, postId: '5004', now }]);
  const social = new SocialStore(sqlite);
  const read = (cap: number, celebrityAbove = 10_000) => decodeTimeline(firstWindow(social, EARLY, cap, celebrityAbove));
  const whole = read(800);
  t.same(whole.ids.map(String), ['5001', '5002', '5003', '5005'], 'both authors merged, the deleted post left out');
  t.equal(whole.floor, 0n);
  const capped = read(2);
  t.same(capped.ids.map(String), ['5003', '5005'], 'the newest two');
  t.equal(capped.floor, 5002n, 'the floor at the newest left out: reads go to SQLite at or below it');
  sqlite.prepare('INSERT INTO pull_authors (author_id, marked_at) VALUES (?, ?)').run(LATE, now);
  t.same(read(800).ids.map(String), ['5001', '5002', '5003'], "a pulled author's posts stay with the read-time merge");
});

t.test('a first window reads a share of each author first, and on below only when the window is short', async (t) => {
  const { commit, sqlite } = setUp(t, 10_000, false);
  const reader = '2000';
  const authors = ['2001', '2002', '2003', '2004'];
  addUsers(sqlite, Object.fromEntries([reader, ...authors].map((id) => [id, 'u' + id])), now);
  commit(...authors.map((a): Op => ['follow', { followerId: reader, followeeId: a, sinceId: '100', now }]));
  const byAuthor = new Map<string, bigint[]>([[reader, []], ...authors.map((a): [string, bigint[]] => [a, []])]);
  let next = 10_000n;
  const postBy = (authorId: string, n: number) => {
    const ops: Op[] = [];
    for (let i = 0; i < n; i++, next++) {
      ops.push(['createPost', { id: String(next), authorId, text: 'p', mediaIds: [], replyTo: null, createdAt: now }]);
      byAuthor.get(authorId)!.push(next);
    }
    commit(...ops);
  };
  /** The window by its definition: each author's newest `each` ids, merged, above the cut lists. */
  const expected = (cap: number) => {
    const each = Math.min(cap + 1, Math.max(20, Math.floor(20_000 / byAuthor.size)));
    let floor = 0n;
    const all: bigint[] = [];
    for (const ids of byAuthor.values()) {
      const newest = [...ids].sort((a, b) => (a < b ? 1 : -1)).slice(0, each);
      if (newest.length === each && newest[each - 1] > floor) floor = newest[each - 1];
      all.push(...newest);
    }
    const merged = all.sort((a, b) => (a < b ? 1 : -1)).filter((id) => id > floor).slice(0, cap + 1);
    if (merged.length > cap) floor = merged[cap];
    return { floor, ids: merged.slice(0, cap).reverse() };
  };
  const social = new SocialStore(sqlite);
  let idsRead = 0;
  const read = social.idsOfAuthorsBetween.bind(social);
  social.idsOfAuthorsBetween = (ranges, limit) => {
    const lists = read(ranges, limit);
    for (const ids of lists) idsRead += ids.length;
    return lists;
  };
  const windowOf = (cap: number) => {
    idsRead = 0;
    return decodeTimeline(firstWindow(social, reader, cap, 10_000));
  };

  // Every author posts in turn: the first step's share is enough.
  for (let round = 0; round < 60; round++) for (const a of authors) postBy(a, 5);
  postBy(reader, 3);
  t.same(windowOf(100), expected(100), 'the same window as reading every author in full');
  t.ok(idsRead <= 5 * 31, `only the first step read: ${idsRead} ids (a full read of each: ${5 * 101})`);

  // One author posts far more than the others: the others' lists are read on below their cut.
  postBy(authors[0], 400);
  for (const a of authors.slice(1)) postBy(a, 2);
  t.same(windowOf(100), expected(100), 'the same window when one author fills most of it');
  t.ok(idsRead > 5 * 31, `the second step read on: ${idsRead} ids`);
  t.same(windowOf(800), expected(800), 'and with a cap larger than what there is');
  t.same(windowOf(30), expected(30));

  // A deleted post is not in it, and the list past it is read on.
  const newest = byAuthor.get(authors[0])!.pop()!;
  commit(['deletePost', { userId: authors[0], postId: String(newest), now }]);
  t.same(windowOf(100), expected(100), 'without the deleted post');
});

t.test('first windows are made within a time budget per task; the users left out wait, served from SQLite', async (t) => {
  const { commit, fanOut, timeline, sqlite } = setUp(t, 100_000, false);
  // A thousand followers without a window: more first windows than one task makes. (Not many
  // more: every later task also updates the windows made so far before it makes new ones, within
  // the same time budget, so on a starved machine thousands of them left later tasks little room.)
  const followers = Array.from({ length: 1000 }, (_, i) => String(20_000 + i));
  addUsers(sqlite, Object.fromEntries(followers.map((id) => [id, 'f' + id])), now);
  commit(...followers.map((id): Op => ['follow', { followerId: id, followeeId: AUTHOR, sinceId: '100', now }]));
  commit(post('5000'));
  const first = await fanOut();
  const made = () => followers.filter((id) => timeline(id).length > 0).length;
  const afterFirst = made();
  t.ok(afterFirst > 0 && afterFirst < followers.length, `${afterFirst} of ${followers.length} first windows made by the first task`);
  t.equal(first.timelines, afterFirst + 1, 'the count says which timelines were written (the author\'s too)');
  const wrong = followers.filter((id) => timeline(id).length > 0 && timeline(id).join() !== '5000');
  t.same(wrong, [], 'every window made holds the post');
  let tasks = 1;
  // Bounded by progress, not by a count of tasks: the budget is time, so a starved machine makes
  // fewer windows per task, but a task that makes none at all, many times over, is a failure.
  let stalled = 0;
  for (let n = 5001, count = afterFirst; count < followers.length; n++, tasks++) {
    if (stalled >= 50) throw new Error(`the first windows were never all made (${count} of ${followers.length})`);
    commit(post(String(n)));
    await fanOut();
    const before = count;
    count = made();
    stalled = count > before ? 0 : stalled + 1;
  }
  t.ok(tasks > 1, `later tasks made the rest (${tasks} tasks in all)`);
  const last = timeline(followers[followers.length - 1]);
  t.same(last.slice(0, 2), ['5000', '5001'], 'a window made late holds the posts from before it, read from SQLite');
});

t.test('once per data directory, the short windows of an earlier version are dropped, to be made again from SQLite', async (t) => {
  const { dir } = tempStore(t, 'perch-windows-');
  const hot = openHotStore(dir);
  t.teardown(() => hot.close());
  const db = homeTimelines(hot);
  const ids = (n: number, from: bigint) => Array.from({ length: n }, (_, i) => from + BigInt(i));
  db.putSync('1', encodeTimeline(5000n, [])); // an earlier version's first window: empty, floor at the newest post
  db.putSync('2', encodeTimeline(5000n, ids(3, 5001n))); // the same, three posts later
  db.putSync('3', encodeTimeline(0n, ids(3, 5001n))); // the whole timeline: stays
  db.putSync('4', encodeTimeline(4000n, ids(200, 5001n))); // pages above its floor: stays
  t.same([5000n, 5001n, 5003n, 5004n].map((id) => windowCovers(db, '2', id)), [true, true, true, false], 'at or below the floor, or held; not a newer id');
  t.equal(windowCovers(db, '9', 5004n), true, 'no window: every read goes to SQLite');
  t.equal(dropShortWindows(hot), 2);
  db.resetReadTxn();
  t.same(['1', '2', '3', '4'].map((k) => db.get(k) !== undefined), [false, false, true, true]);
  db.putSync('5', encodeTimeline(5000n, []));
  t.equal(dropShortWindows(hot), null, 'done once: a later start leaves every window alone');
  db.resetReadTxn();
  t.ok(db.get('5'));
});
