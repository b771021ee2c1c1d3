// What is kept of uploaded media: a file its uploader deletes goes (unless a live post carries
// it); a file never posted is forgotten after media.unposted_ttl_seconds, one posted meanwhile is
// not; files without a row are removed once old enough. The e2e tests are in
// test/e2e/social-media.test.ts.
import t from 'tap';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addUsers, groupCommit, tempStore } from '../helpers/store';
import { MediaStore, mediaFilePath, mediaIdOfPath } from '../../src/media/store';
import { HttpError } from '../../src/http/errors';
import { fileOfName, sweepFrom, sweepPeriodMs, unpostedHorizon, ORPHAN_MIN_AGE_MS } from '../../src/media/upkeep';
import { findUnposted, sweepOrphanFiles } from '../../src/media/tasks';

const ALICE = '1001';
const BOB = '1002';
const at = (minute: number) => `2026-01-02T00:${String(minute).padStart(2, '0')}:00.000Z`;
const post = (id: number, mediaIds: string[], authorId = ALICE) => ({ id: String(id), authorId, text: `post ${id}`, mediaIds, replyTo: null, createdAt: at(59) });
const errorOf = (o: { ok: boolean }) => (o as { ok: false; error: unknown }).error as HttpError;

t.test('the sweep runs a tenth of the keeping time, between a second and ten minutes', async (t) => {
  t.equal(sweepPeriodMs(86_400_000), 600_000, 'a day: every ten minutes');
  t.equal(sweepPeriodMs(600_000), 60_000, 'ten minutes: every minute');
  t.equal(sweepPeriodMs(2000), 1000, 'two seconds: every second');
  t.equal(sweepPeriodMs(1), 1000);
  t.equal(sweepPeriodMs(0), 600_000, 'kept for ever: only the daily look for files without a row is left');
  t.equal(sweepFrom(''), '', 'the first pass looks from the start');
  t.equal(sweepFrom('2026-01-02T00:10:00.000Z'), '2026-01-02T00:09:00.000Z', 'later ones a minute before the last horizon');
  t.equal(unpostedHorizon(Date.parse('2026-01-02T00:10:00.000Z'), 60_000), '2026-01-02T00:09:00.000Z');
});

t.test('names of the media directory: files by id, partial files, and anything else left alone', async (t) => {
  t.same(fileOfName('123456789-0123456789abcdef01234567'), { id: '123456789-0123456789abcdef01234567', partial: false });
  t.same(fileOfName('123456789.tmp'), { id: '123456789', partial: true });
  t.equal(fileOfName('notes.txt'), undefined);
  t.equal(fileOfName('.tmp'), undefined);
  t.equal(fileOfName('0123'), undefined, 'no id starts with 0');
  t.equal(mediaIdOfPath(mediaFilePath('123-abc')), '123-abc', 'a backup path back to its id');
  t.equal(mediaIdOfPath('search.db'), undefined);
  t.equal(mediaIdOfPath(mediaFilePath('')), undefined);
});

t.test('an uploader deletes a file: never posted, or its posts deleted; not while a post carries it', async (t) => {
  const { db } = tempStore(t, 'perch-media-delete-');
  addUsers(db, { [ALICE]: 'alice', [BOB]: 'bob' }, at(0));
  const media = new MediaStore(db);
  for (const id of ['801', '802', '803']) media.insert(id, ALICE, 'image/png', 10, at(1));
  const group = groupCommit(db);
  t.ok(group.commit([['createPost', post(20, ['802'])], ['createPost', post(21, ['803'])], ['deletePost', { userId: ALICE, postId: '21', now: at(59) }]]).every((o) => o.ok));

  const del = (id: string, ownerId: string) => group.commit([['deleteMedia', { id, ownerId }]])[0];
  const byBob = del('801', BOB);
  t.equal(errorOf(byBob).status, 403, "bob cannot delete alice's file");
  t.equal(errorOf(byBob).body().message, 'Only its uploader can delete a media file.');
  const inPost = del('802', ALICE);
  t.equal(errorOf(inPost).status, 409, 'a file in a live post stays');
  t.equal(errorOf(inPost).body().message, 'This file is in a post; delete the post first.');
  t.equal(errorOf(del('999', ALICE)).status, 404, 'an unknown id');
  t.ok(['801', '802', '803'].every((id) => media.owner(id) === ALICE), 'every refusal changed nothing');

  t.ok(del('801', ALICE).ok, 'never posted');
  t.ok(del('803', ALICE).ok, 'its only post is deleted');
  t.equal(media.owner('801'), undefined);
  t.equal(media.owner('803'), undefined);
  t.equal(media.bytesOf(ALICE), 10, 'the quota counts only what is left');
  t.equal(errorOf(del('801', ALICE)).status, 404, 'deleted already');
});

t.test('files never posted are forgotten after the keeping time; posted ones, and newer ones, stay', async (t) => {
  const { db, dir } = tempStore(t, 'perch-media-unposted-');
  addUsers(db, { [ALICE]: 'alice' }, at(0));
  const media = new MediaStore(db);
  media.insert('901', ALICE, 'image/png', 10, at(1));
  media.insert('902', ALICE, 'image/png', 20, at(2));
  media.insert('903', ALICE, 'image/png', 30, at(3));
  media.insert('904', ALICE, 'image/png', 40, at(30));
  const group = groupCommit(db);
  t.ok(group.commit([['createPost', post(30, ['902'])], ['deletePost', { userId: ALICE, postId: '30', now: at(59) }]]).every((o) => o.ok));
  t.ok(media.anyCreated('', at(10)));
  t.notOk(media.anyCreated(at(4), at(10)), 'nothing uploaded in that span');
  const ctx = { dataDir: dir, sqlite: db } as never;

  const found = findUnposted(ctx, { from: '', before: at(10), limit: 500 });
  t.same(found, { files: [{ id: '901', size: 10 }, { id: '903', size: 30 }], complete: true }, 'the posted file (its post deleted) and the newer one are not candidates');
  const one = findUnposted(ctx, { from: '', before: at(10), limit: 1 });
  t.same(one, { files: [{ id: '901', size: 10 }], complete: false }, 'a full batch says there may be more');

  // 903 is posted between the read and the writer's pass: the writer keeps it.
  t.ok(group.commit([['createPost', post(31, ['903'])]])[0].ok);
  const out = group.commit([['forgetUnpostedMedia', { files: found.files, before: at(10) }]])[0] as { ok: true; value: unknown };
  t.ok(out.ok);
  t.same(out.value, [{ id: '901', size: 10 }], 'only the file still unposted');
  t.same(
    db.prepare('SELECT id FROM media ORDER BY id').pluck().all(),
    ['902', '903', '904'],
    'posted ones and the one uploaded after the horizon are kept',
  );
  const late = group.commit([['forgetUnpostedMedia', { files: [{ id: '904', size: 40 }], before: at(10) }]])[0] as { ok: true; value: unknown };
  t.same(late.value, [], 'a file newer than the horizon is never forgotten, whatever the caller asks');
  t.ok(group.commit([['createPost', post(32, ['901'])]])[0].ok === false, 'a post of a forgotten file is refused');
});

t.test('the scan of unposted files reads the time index', async (t) => {
  const { db } = tempStore(t, 'perch-media-unposted-plan-');
  const plan = (db.prepare("EXPLAIN QUERY PLAN SELECT id, size FROM media m WHERE created_at >= ? AND created_at < ? AND NOT EXISTS (SELECT 1 FROM post_media pm WHERE pm.media_id = m.id) ORDER BY created_at, id LIMIT ?").all('', 'z', 1) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
  t.match(plan, /USING INDEX media_created/);
});

t.test('files without a row are removed once an hour old; files with one, new ones and strangers stay', async (t) => {
  const { db, dir } = tempStore(t, 'perch-media-orphans-');
  addUsers(db, { [ALICE]: 'alice' }, at(0));
  new MediaStore(db).insert('701', ALICE, 'image/png', 3, at(1));
  const files = join(dir, 'media');
  mkdirSync(files, { recursive: true });
  const now = Date.now();
  const old = (now - ORPHAN_MIN_AGE_MS - 60_000) / 1000;
  const write = (name: string, aged: boolean) => {
    writeFileSync(join(files, name), 'abcd');
    if (aged) utimesSync(join(files, name), old, old);
  };
  write('701', true); // has its row
  write('702', true); // no row, old
  write('703', false); // no row, written just now: its upload may still commit
  write('704.tmp', true); // an upload cut short, old
  write('README', true); // not ours
  const ctx = { dataDir: dir, sqlite: db } as never;
  t.same(sweepOrphanFiles(ctx, { nowMs: now }), { removed: 2, bytes: 8 });
  t.same(['701', '702', '703', '704.tmp', 'README'].map((n) => existsSync(join(files, n))), [true, false, true, false, true]);
});
