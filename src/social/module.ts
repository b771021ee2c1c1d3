// The microblog capability: posts, likes, follows, profile lists and home timelines. Its writes
// append outbox events; the fan-out is an outbox consumer (fanout.ts), and the filing of new posts
// under their authors is a job of the writer (store.ts, indexAuthorPosts).
import type { Capability } from '../capability';
import { log } from '../log';
import { dropShortWindows } from './home-timelines';
import type { OutboxConsumer } from '../outbox/consumer';
import { MIGRATIONS } from './migrations';
import type { FanoutResult } from './fanout';
import { SocialService } from './service';
import { AUTHOR_INDEX_POSITION, FANOUT_CONSUMER, SocialStore } from './store';
import { FOLLOWS_CHANGED, HomeTimelineReader, POST_DELETED } from './timeline';
import { POST_MARKS, POST_MARK_SLOTS, PostMarks } from './post-marks';
import { OUTBOX_SIGNAL } from '../outbox/module';
import { socialWrites, type SocialWrites } from './writes';
import { SOCIAL_TASKS } from './tasks';

// Its routes are loaded by the HTTP threads alone, when they make them: the writer thread takes
// this module's operations and jobs and serves no route, and the routes' request schemas bring zod.
const routesModule = () => require('./routes') as typeof import('./routes');

/**
 * How long after a task's start the next may start, while events keep coming. A task's cost is
 * mostly one rewrite per home timeline it touches, whatever the number of new ids it adds there, so
 * a task that gathers more posts makes each post cheaper. Under a light load tasks are small and
 * start at most every 25 ms; once a task has fanned out `STREAM_TASK_POSTS` or more (posts keep
 * coming, several hundred a second), the next waits 100 ms from its start. Posts, not events: a
 * load of likes touches no timeline, and gains nothing from waiting. The longer lag costs readers
 * nothing, since they merge the posts not fanned out yet (timeline.ts). A post made while the
 * fan-out is idle, or after a small task, is dispatched as soon as the writer reports it durable
 * and the short gap allows.
 */
const LIGHT_GAP_MS = 25;
const STREAM_GAP_MS = 100;
const STREAM_TASK_POSTS = 16;

export const fanoutConsumer: OutboxConsumer<FanoutResult> = {
  name: FANOUT_CONSUMER,
  tasks: SOCIAL_TASKS,
  task: 'social.fanout',
  // A task's time grows with its posts and the timelines they reach; a backlog larger than a
  // batch is worked off in tasks back to back.
  batch: 5000,
  // Woken by the writer when new events are durable, at most once a period; posts that arrive
  // within the gap go out when it ends.
  everyMs: 10,
  gapMs: (last) => ((last?.posts ?? 0) >= STREAM_TASK_POSTS ? STREAM_GAP_MS : LIGHT_GAP_MS),
  lagMetric: 'perch_fanout_lag',
};

/**
 * New posts wait this long to be filed under their authors, or until this many wait: a filing
 * rewrites a page per author whatever the number of posts it files for them, so filing many at
 * once costs each less. Bounded in posts as well, because reads scan the unfiled posts' events
 * (docs/social.md, "Posts").
 */
const AUTHOR_FILING_DELAY_MS = 100;
const AUTHOR_FILING_POSTS = 2000;

export const social: Capability = {
  name: 'social',
  migrations: MIGRATIONS,
  writes: socialWrites,
  writerJobs: (db) => {
    const store = new SocialStore(db);
    return [
      {
        name: 'social.fileAuthorPosts',
        op: 'indexAuthorPosts',
        args: () => ({ now: new Date().toISOString() }),
        after: ['createPost'],
        delayMs: AUTHOR_FILING_DELAY_MS,
        batch: AUTHOR_FILING_POSTS,
        pending: () => store.hasUnfiledPosts(),
      },
    ];
  },
  tasks: SOCIAL_TASKS,
  consumers: [fanoutConsumer],
  counterBanks: { [POST_MARKS]: POST_MARK_SLOTS },
  async prepare(ctx) {
    const dropped = dropShortWindows(ctx.hot);
    if (dropped) log.info('short home timelines of an earlier version dropped: made again from SQLite when posts reach them', { dropped });
  },
  // The filing reads only post_created events: it holds back no other event from pruning.
  outboxPositions: [{ name: AUTHOR_INDEX_POSITION, types: ['post_created'] }],
  http(ctx) {
    const store = new SocialStore(ctx.sqlite);
    const marks = new PostMarks(ctx.signals.counter(POST_MARKS));
    const timeline = new HomeTimelineReader(store, ctx.hot, ctx.config, ctx.signals.counter(OUTBOX_SIGNAL), marks, ctx.pubsub);
    const service = new SocialService(store, ctx.accounts, ctx.newId, ctx.writes.as<SocialWrites>(), {
      postWriting: (post) => timeline.expectPost(post),
      postWritten: (post) => marks.posted(post.author_id),
      async postDeleted(id) {
        timeline.dropPost(id);
        await ctx.pubsub.publishAndWait(POST_DELETED, { id });
      },
      async followsChanged(userId) {
        timeline.followsChanged(userId);
        await ctx.pubsub.publishAndWait(FOLLOWS_CHANGED, { userId });
      },
    });
    return { routes: routesModule().socialRoutes(service, timeline, ctx.cursors) };
  },
  status: ({ sqlite }) => new SocialStore(sqlite).counts(),
};
