// The media quota: each user's uploads may total `media.user_quota_bytes`. The writer's check,
// inside the transaction, is the one that holds (the HTTP thread's check before writing a file
// cannot see uploads of the same user committed beside it); the e2e test is in
// test/e2e/social-media.test.ts.
import t from 'tap';
import { addUsers, groupCommit, tempStore } from '../helpers/store';
import { fitsQuota, NO_QUOTA } from '../../src/media/quota';
import { MediaStore } from '../../src/media/store';
import { HttpError } from '../../src/http/errors';

const now = '2026-01-02T00:00:00.000Z';
const ALICE = '1001';
const BOB = '1002';

t.test('a file fits while the total stays at or under the quota; 0 is no quota', async (t) => {
  t.equal(fitsQuota(0, 100, 100), true, 'exactly the quota');
  t.equal(fitsQuota(1, 100, 100), false, 'one byte over');
  t.equal(fitsQuota(60, 40, 100), true);
  t.equal(fitsQuota(61, 40, 100), false);
  t.equal(fitsQuota(10 ** 12, 5 * 2 ** 20, NO_QUOTA), true, 'no quota');
});

t.test('the writer refuses the upload that would pass its user over the quota, and only that one', async (t) => {
  const { db } = tempStore(t, 'perch-media-quota-');
  addUsers(db, { [ALICE]: 'alice', [BOB]: 'bob' }, now);
  const group = groupCommit(db);
  const upload = (id: string, ownerId: string, size: number) => ['insertMedia', { id, ownerId, contentType: 'image/png', size, now, quotaBytes: 100 }] as [string, unknown];
  // In one group: each insert sees those before it in the same transaction.
  const out = group.commit([upload('701', ALICE, 60), upload('702', ALICE, 41), upload('703', ALICE, 40), upload('704', BOB, 100)]);
  t.same(
    out.map((o) => o.ok),
    [true, false, true, true],
    "60 fits; 41 more would be 101; 40 more is 100; bob's quota is his own",
  );
  const refused = (out[1] as { ok: false; error: unknown }).error;
  t.ok(refused instanceof HttpError);
  t.equal((refused as HttpError).status, 413);
  t.same((refused as HttpError).body(), {
    error: 'payload_too_large',
    message: 'This upload (41 B) would take your media past its quota of 100 B (60 B used).',
    quota_bytes: 100,
    used_bytes: 60,
  });
  const media = new MediaStore(db);
  t.equal(media.bytesOf(ALICE), 100);
  t.equal(media.bytesOf(BOB), 100);
  t.equal(media.owner('702'), undefined, 'no row for the refused upload');
  t.equal(media.bytesOf('1999'), 0, 'a user with no uploads holds 0 bytes');
  t.notOk(group.commit([upload('705', ALICE, 1)])[0].ok, 'full: not one byte more');
  t.ok(group.commit([['insertMedia', { id: '706', ownerId: ALICE, contentType: 'image/png', size: 10 ** 9, now, quotaBytes: NO_QUOTA }]])[0].ok, 'without a quota anything goes');
});

t.test("the bytes are summed from the owner index, not the table", async (t) => {
  const { db } = tempStore(t, 'perch-media-quota-plan-');
  const plan = (db.prepare('EXPLAIN QUERY PLAN SELECT COALESCE(SUM(size), 0) FROM media WHERE owner_id = ?').all('1') as Array<{ detail: string }>).map((r) => r.detail).join('; ');
  t.match(plan, /USING COVERING INDEX media_owner/);
});
