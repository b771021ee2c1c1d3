// MediaFiles.write: every byte on disk and synced, or an error and nothing left behind. Short
// writes and a full disk are injected through the file-I/O seam; the real-disk case is in
// test/e2e/media-disk-full.test.ts.
import t, { type Test } from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaFiles, type MediaFileIo } from '../../src/media/store';

function dataDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'perch-media-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected`), { code });
}

const bytes = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));

t.test('short writes are continued until every byte is written', async (t) => {
  const calls: number[] = [];
  const io: Partial<MediaFileIo> = {
    // At most 1,000 bytes per call, as a nearly full disk or a signal can make write(2) do.
    write: (fd, buf, offset, length) => {
      calls.push(length);
      return Promise.resolve(writeSync(fd, buf, offset, Math.min(length, 1000)));
    },
  };
  const files = new MediaFiles(dataDir(t), io);
  await files.write('42', bytes);
  t.equal(calls.length, 10, 'ten calls of 1,000 bytes');
  t.same(calls.slice(0, 3), [10_000, 9_000, 8_000], 'each call asks for the rest');
  t.same(readFileSync(join(files.dir, '42')), bytes, 'the file holds every byte');
  t.same(readdirSync(files.dir), ['42'], 'no temporary file is left');
});

t.test('a full disk mid-file throws and leaves neither the file nor its temporary', async (t) => {
  let written = 0;
  const io: Partial<MediaFileIo> = {
    write: (fd, buf, offset, length) => {
      if (written >= 4096) return Promise.reject(errno('ENOSPC'));
      const n = writeSync(fd, buf, offset, Math.min(length, 4096 - written));
      written += n;
      return Promise.resolve(n);
    },
  };
  const files = new MediaFiles(dataDir(t), io);
  await t.rejects(files.write('43', bytes), { code: 'ENOSPC' });
  t.same(readdirSync(files.dir), [], 'nothing left behind');
});

t.test('a write that makes no progress is an error, not an endless loop', async (t) => {
  const files = new MediaFiles(dataDir(t), { write: async () => 0 });
  await t.rejects(files.write('44', bytes), { code: 'EIO' });
  t.same(readdirSync(files.dir), []);
});

t.test('a failed fsync (EDQUOT, EIO) throws and leaves nothing behind', async (t) => {
  for (const code of ['EDQUOT', 'EIO']) {
    const files = new MediaFiles(dataDir(t), {
      fsync: async () => {
        throw errno(code);
      },
    });
    await t.rejects(files.write('45', bytes), { code }, code);
    t.same(readdirSync(files.dir), [], `${code}: nothing left behind`);
  }
});

t.test('a failed fsync of the directory after the rename removes the file', async (t) => {
  let syncs = 0;
  const files = new MediaFiles(dataDir(t), {
    fsync: async () => {
      // The first fsync is the file's, the second the directory's.
      if (++syncs === 2) throw errno('EIO');
    },
  });
  await t.rejects(files.write('46', bytes), { code: 'EIO' });
  t.same(readdirSync(files.dir), [], 'a file whose name may not be durable is not kept');
});

t.test('without a seam the real file system is used', async (t) => {
  const files = new MediaFiles(dataDir(t));
  await files.write('47', bytes);
  t.same(readFileSync(join(files.dir, '47')), bytes);
  t.same(await files.read('47'), bytes);
});

t.test('uploads written together are written one after another, a failed one not holding up the next', async (t) => {
  const steps: string[] = [];
  let syncs = 0;
  const files = new MediaFiles(dataDir(t), {
    write: async (fd, buf, offset, length) => {
      steps.push(`write ${buf[0]}`);
      // Gives the other upload every chance to start, were the two not kept apart.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return writeSync(fd, buf, offset, length);
    },
    fsync: async () => {
      // The first upload's file sync fails (its directory is never synced); the others pass.
      if (++syncs === 1) throw errno('EIO');
      steps.push('fsync');
    },
  });
  const one = Buffer.from([1, 2, 3]);
  const two = Buffer.from([2, 3, 4]);
  const three = Buffer.from([3, 4, 5]);
  const results = await Promise.allSettled([files.write('48', one), files.write('49', two), files.write('50', three)]);
  t.same(
    results.map((r) => r.status),
    ['rejected', 'fulfilled', 'fulfilled'],
    'the first fails alone',
  );
  t.same(steps, ['write 1', 'write 2', 'fsync', 'fsync', 'write 3', 'fsync', 'fsync'], 'each upload ends, file and directory synced, before the next begins');
  t.same(readdirSync(files.dir).sort(), ['49', '50'], 'the failed upload left nothing');
  t.same(readFileSync(join(files.dir, '50')), three);
});
