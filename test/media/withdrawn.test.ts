// A media file is withdrawn (no longer served) once it was posted and every post carrying it is
// deleted; a file never posted is not. Which posts carry a file is kept in post_media by the post's
// own insert, and migration 10 fills it from the posts made before it.
import t from 'tap';
import { addUsers, groupCommit, tempStore } from '../helpers/store';
import { allMigrations, migrateAll } from '../../src/capabilities';
import { MediaStore } from '../../src/media/store';

const now = '2026-01-02T00:00:00.000Z';
const ALICE = '1001';
const post = (id: number, mediaIds: string[]) => ({ id: String(id), authorId: ALICE, text: `post ${id}`, mediaIds, replyTo: null, createdAt: now });

t.test('posted, then every post deleted: withdrawn; never posted, or one post left: served', async (t) => {
  const { db } = tempStore(t, 'perch-media-withdrawn-');
  addUsers(db, { [ALICE]: 'alice' }, now);
  const media = new MediaStore(db);
  for (const id of ['501', '502', '503']) media.insert(id, ALICE, 'image/png', 10, now);
  const group = groupCommit(db);
  t.ok(group.commit([['createPost', post(10, ['501', '502'])], ['createPost', post(11, ['502'])]]).every((o) => o.ok));
  t.same(db.prepare('SELECT media_id || \':\' || post_id FROM post_media ORDER BY media_id, post_id').pluck().all(), ['501:10', '502:10', '502:11']);
  const served = (id: string) => media.served(id) !== undefined;
  t.same(['501', '502', '503'].map(served), [true, true, true], 'all served');
  t.same(media.served('501'), { id: '501', owner_id: ALICE, content_type: 'image/png', size: 10, created_at: now }, 'with its row');

  t.ok(group.commit([['deletePost', { userId: ALICE, postId: '10', now }]])[0].ok);
  t.same(['501', '502', '503'].map(served), [false, true, true], "501's only post is deleted; 502 is still on post 11; 503 was never posted");
  t.ok(group.commit([['deletePost', { userId: ALICE, postId: '11', now }]])[0].ok);
  t.equal(served('502'), false, 'its last post deleted');
  t.equal(media.served('999'), undefined, 'an unknown id is not served');
});

t.test('migration 10 records the media of the posts made before it, deleted ones included', async (t) => {
  const { db } = tempStore(t, 'perch-media-migration-', { migrated: false });
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of allMigrations().filter((m) => m.version <= 9)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, now);
  }
  addUsers(db, { [ALICE]: 'alice' }, now);
  const insertMedia = db.prepare("INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, 'image/png', 10, ?)");
  for (const id of ['601', '602', '603']) insertMedia.run(id, ALICE, now);
  const insertPost = db.prepare('INSERT INTO posts (id, author_id, text, media_ids, created_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?)');
  insertPost.run(20, ALICE, 'kept', '["601"]', now, null);
  insertPost.run(21, ALICE, 'deleted', '["602","601"]', now, now);
  insertPost.run(22, ALICE, 'plain', '[]', now, null);

  t.same(migrateAll(db).find((m) => m.version === 10), { version: 10, name: 'post media' });
  t.same(db.prepare('SELECT media_id || \':\' || post_id FROM post_media ORDER BY media_id, post_id').pluck().all(), ['601:20', '601:21', '602:21']);
  const media = new MediaStore(db);
  t.same(['601', '602', '603'].map((id) => media.served(id) !== undefined), [true, false, true]);
  t.same(migrateAll(db), [], 'applied once');
});
