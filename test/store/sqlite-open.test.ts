// Opening perch.db and search.db: the switch of a new file to WAL, when another process holds the
// write lock of its own switch (or of anything else made in rollback-journal mode) at that moment.
import t from 'tap';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { endWithTestProcess, tempDataDir } from '../helpers/server';
import { sqlitePath } from '../../src/store/sqlite';
import { searchDbPath } from '../../src/search/store';

const OPENERS = [
  { file: 'perch.db', path: sqlitePath, module: require.resolve('../../src/store/sqlite'), open: 'openSqlite' },
  { file: 'search.db', path: searchDbPath, module: require.resolve('../../src/search/store'), open: 'openSearchDb' },
];

for (const opener of OPENERS) t.test(`a new ${opener.file}'s WAL switch waits for another process's write lock instead of failing`, async (t) => {
  const dir = tempDataDir('perch-sqlite-open-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // The file as another process has it while it switches: new, in rollback-journal mode, with the
  // write lock taken. SQLite answers a second switch SQLITE_BUSY at once there, without waiting.
  const holder = new Database(opener.path(dir));
  holder.exec('BEGIN IMMEDIATE');
  const raw = new Database(opener.path(dir));
  raw.pragma('busy_timeout = 5000');
  t.throws(() => raw.pragma('journal_mode = WAL'), { code: 'SQLITE_BUSY' }, "SQLite's own answer: busy, without its busy handler");
  raw.close();

  // The opener in another process: it says when it starts, and the lock is let go 300 ms later.
  const child = spawn(process.execPath, [
    '-e',
    `const { ${opener.open} } = require(${JSON.stringify(opener.module)});
     process.stdout.write('opening\\n');
     const db = ${opener.open}(${JSON.stringify(dir)});
     process.stdout.write(db.pragma('journal_mode', { simple: true }) + '\\n');`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  endWithTestProcess(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let release: NodeJS.Timeout | undefined;
  const code = await new Promise<number | null>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out === 'opening\n') release = setTimeout(() => holder.exec('ROLLBACK'), 300);
    });
    child.on('exit', resolve);
  });
  clearTimeout(release);
  holder.close();
  t.equal(err, '', 'no error');
  t.equal(code, 0);
  t.equal(out, 'opening\nwal\n', 'the file is in WAL mode once the other process let its lock go');
  const db = new Database(opener.path(dir));
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  db.close();
});
