// A backup copies the files its snapshot's rows refer to. A file deleted after the snapshot (its
// uploader deleting it, the media upkeep forgetting one never posted) is gone when the copy comes
// to it: the manifest lists it as missing, as a restore expects, and as deleted, not lost, so that
// `perch backup` warns only of files lost, and a restore deletes its row as the live database
// did. The whole command is tested in test/e2e/backup.test.ts.
import t from 'tap';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addUsers, tempStore } from '../helpers/store';
import { tempDataDir } from '../helpers/server';
import { createBackup } from '../../src/backup/backup';
import { restoreBackup } from '../../src/backup/restore';
import { MediaStore } from '../../src/media/store';
import { loadConfig } from '../../src/config';
import { openSqlite } from '../../src/store/sqlite';

const now = '2026-01-02T00:00:00.000Z';
const ALICE = '1001';

t.test('a file deleted after the snapshot is listed as deleted, a lost one as missing only; the restore forgets the deleted one', async (t) => {
  const { db, dir } = tempStore(t, 'perch-backup-deleted-');
  addUsers(db, { [ALICE]: 'alice' }, now);
  const media = new MediaStore(db);
  mkdirSync(join(dir, 'media'), { recursive: true });
  for (const id of ['301', '302', '303']) {
    media.insert(id, ALICE, 'image/png', 4, now);
    writeFileSync(join(dir, 'media', id), 'abcd');
  }
  const target = join(tempDataDir('perch-backup-deleted-target-'), 'b');
  const restored = join(tempDataDir('perch-backup-deleted-restored-'), 'data');
  t.teardown(() => {
    rmSync(join(target, '..'), { recursive: true, force: true });
    rmSync(join(restored, '..'), { recursive: true, force: true });
  });

  const manifest = await createBackup(dir, target, {
    afterSnapshot() {
      // 301 deleted as the server deletes: its row, then its file. 302's file lost, its row kept.
      media.delete('301');
      rmSync(join(dir, 'media', '301'));
      rmSync(join(dir, 'media', '302'));
    },
  });
  t.same(manifest.files.missing, ['media/301', 'media/302'], 'neither is in the backup');
  t.same(manifest.files.deleted, ['media/301'], 'only 301 was deleted; 302 is lost');
  t.equal(manifest.files.count, 1);
  t.same(Object.keys(manifest.files.sha256 ?? {}), ['media/303']);
  t.equal(manifest.row_counts.media, 3, "the snapshot's rows, 301's among them");

  const r = await restoreBackup(target, restored, loadConfig({ env: {} }));
  t.ok(r, 'the backup restores');
  t.ok(existsSync(join(restored, 'media', '303')));
  const copy = openSqlite(restored);
  t.teardown(() => copy.close());
  const restoredMedia = new MediaStore(copy);
  t.same([...restoredMedia.ids()], ['302', '303'], "301's row goes as it went in the live database; 302's, lost, stays");
  t.equal(restoredMedia.bytesOf(ALICE), 8, 'the deleted file no longer counts against the quota');
});
