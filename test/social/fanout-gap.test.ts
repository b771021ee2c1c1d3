// How long the fan-out consumer leaves between its tasks while events keep coming (module.ts):
// short while tasks are small, longer once a task carried a stream of posts.
import t from 'tap';
import { fanoutConsumer } from '../../src/social/module';

t.test('fan-out tasks start every 25 ms under a light load, every 100 ms under a stream of posts', async (t) => {
  const gap = fanoutConsumer.gapMs!;
  t.equal(gap(undefined), 25);
  t.equal(gap({ posts: 1, follows: 0, timelines: 10 }), 25);
  t.equal(gap({ posts: 15, follows: 0, timelines: 10 }), 25);
  t.equal(gap({ posts: 16, follows: 0, timelines: 10 }), 100, 'sixteen posts in a task: a stream');
  t.equal(gap({ posts: 5000, follows: 0, timelines: 10_000 }), 100);
  t.equal(gap({ posts: 0, follows: 400, timelines: 400 }), 25, 'follows touch timelines, but are not a stream of posts');
});
