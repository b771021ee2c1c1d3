// The engine's database across versions: an index built before texts were indexed in their
// search form is forgotten as built when it is opened, so that the next server start builds it
// again from the posts (search/module.ts), and a new database starts at the latest version.
import t from 'tap';
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { INDEX_SCHEMA } from '../../src/search/migrations';
import { SearchIndexStore, openSearchDb, searchDbPath } from '../../src/search/store';
import { tempDataDir } from '../helpers/server';

const latest = INDEX_SCHEMA[INDEX_SCHEMA.length - 1].version;

t.test('an index built by version 1 is no longer marked built', async (t) => {
  const dir = tempDataDir('perch-index-schema-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const old = new Database(searchDbPath(dir));
  old.exec(INDEX_SCHEMA[0].sql);
  old.pragma(`user_version = ${INDEX_SCHEMA[0].version}`);
  old.prepare("INSERT INTO engine_meta (key, value) VALUES ('built_at', '2026-11-01T00:00:00.000Z')").run();
  old.prepare('INSERT INTO posts_fts (rowid, text) VALUES (?, ?)').run(7n, 'Ｆｕｌｌ');
  old.close();

  const db = openSearchDb(dir);
  t.equal(db.pragma('user_version', { simple: true }), latest);
  const index = new SearchIndexStore(db);
  t.equal(index.meta('built_at'), undefined, 'built again at the next start');
  index.setMeta('built_at', '2026-11-28T00:00:00.000Z');
  db.close();
  const again = openSearchDb(dir);
  t.equal(new SearchIndexStore(again).meta('built_at'), '2026-11-28T00:00:00.000Z', 'a later open keeps the new build');
  again.close();
});

t.test('a new database starts at the latest version', async (t) => {
  const dir = tempDataDir('perch-index-schema-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openSearchDb(dir);
  t.equal(db.pragma('user_version', { simple: true }), latest);
  t.equal(new SearchIndexStore(db).meta('built_at'), undefined);
  db.close();
});
