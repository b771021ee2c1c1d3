import t from 'tap';
import { startServer, type Key } from '../helpers/server';
import { allPages, eventually } from '../social/helpers';

t.test('every post answered 201 survives SIGKILL, and its fan-out completes after restart', async (t) => {
  const first = await startServer();
  const dataDir = first.dataDir;
  const author: Key = await first.keygen('durable');
  const follower: Key = await first.keygen('watcher');
  t.equal((await first.post(`/api/users/${author.user_id}/follow`, { key: follower.key })).status, 200);

  const acknowledged: string[] = [];
  let stop = false;
  // Several concurrent writers, so that group commits carry more than one post when the kill lands.
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      try {
        const r = await first.post('/api/posts', { key: author.key, json: { text: `w${w} #${i}` } });
        if (r.status === 201) acknowledged.push(r.json.id);
      } catch {
        return; // the server is gone
      }
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  await eventually('some posts acknowledged', 10_000, async () => (acknowledged.length >= 150 ? true : undefined));
  await first.stop('SIGKILL');
  stop = true;
  await Promise.all(writers);
  t.ok(acknowledged.length >= 150, `${acknowledged.length} posts acknowledged before the kill`);

  const second = await startServer({ dataDir });
  t.teardown(async () => {
    await second.close();
    const { rmSync } = await import('node:fs');
    rmSync(dataDir, { recursive: true, force: true });
  });
  const listed = new Set((await allPages(second, `/api/users/${author.user_id}/posts?limit=100`)).items.map((p) => p.id));
  const missing = acknowledged.filter((id) => !listed.has(id));
  t.same(missing, [], 'no acknowledged post is lost');
  for (const id of acknowledged.slice(-5)) t.equal((await second.get(`/api/posts/${id}`)).status, 200);

  // Fan-out resumes from the outbox: it catches up with every event (the timeline would show the
  // posts before that too, merged in from the outbox), and the follower's timeline holds every post.
  await eventually('fan-out completes after restart', 10_000, async () =>
    /^perch_fanout_lag_events 0$/m.test((await second.get('/metrics')).text) ? true : undefined,
  );
  const timeline = (await allPages(second, '/api/timeline?limit=100', follower.key)).items;
  const inTimeline = new Set(timeline.map((p) => p.id));
  t.same(acknowledged.filter((id) => !inTimeline.has(id)), [], 'every acknowledged post reached the follower');
  t.equal(timeline.length, listed.size, 'each post once');
});
