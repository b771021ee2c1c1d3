// perch backup DIR and perch restore DIR (backup/): a snapshot of the data directory while the
// server runs, and a new data directory from one.
import { resolve } from 'node:path';
import { createBackup, RefusedError } from '../backup/backup';
import { NotABackupError, restoreBackup } from '../backup/restore';
import type { Manifest } from '../backup/manifest';
import { announceDataDir, commandConfig, dataDirPath, existingDataDirOf, type CommonOptions } from './common';
import { UsageError, printJson } from './usage';
import { alignColumns } from './format';
import { humanBytes } from '../core/human-bytes';

interface BackupOptions extends CommonOptions {
  json: boolean;
}

/** Tables whose counts say the most about a backup, shown first (the manifest has them all). */
const HEADLINE_TABLES = ['users', 'api_keys', 'links', 'posts', 'follows', 'likes', 'media'];

/** The files the database refers to that a backup does not have and that were not deleted while it ran. */
function lostFiles(m: Manifest): string[] {
  const deleted = new Set(m.files.deleted ?? []);
  return m.files.missing.filter((rel) => !deleted.has(rel));
}

/** The files a backup does not have: lost ones, and ones deleted while it ran. */
function filesLeftOut(m: Manifest): string {
  const lost = lostFiles(m);
  const deleted = m.files.deleted ?? [];
  let text = '';
  if (lost.length) text += `; ${lost.length} missing: ${lost.join(', ')}`;
  if (deleted.length) text += `; ${deleted.length} deleted while it ran: ${deleted.join(', ')}`;
  return text;
}

function summary(m: Manifest): string[][] {
  const counts = Object.entries(m.row_counts).sort(([a], [b]) => {
    const ia = HEADLINE_TABLES.indexOf(a);
    const ib = HEADLINE_TABLES.indexOf(b);
    return (ia === -1 ? 99 : ia) - (ib === -1 ? 99 : ib) || a.localeCompare(b);
  });
  const rows = [
    ['database', `${m.database.file}, ${humanBytes(m.database.bytes)}, schema version ${m.schema_version}, perch ${m.perch_version}`],
    ['files', `${m.files.count}, ${humanBytes(m.files.bytes)}${filesLeftOut(m)}`],
    ['rows', counts.filter(([t]) => HEADLINE_TABLES.includes(t)).map(([t, n]) => `${t} ${n}`).join(', ')],
    ['taken at', m.created_at],
  ];
  return rows;
}

export async function backupCommand(target: string, opts: BackupOptions): Promise<void> {
  commandConfig(opts);
  const dir = existingDataDirOf(opts);
  const to = resolve(target);
  const manifest = await createBackup(dir, to).catch((err) => {
    throw err instanceof RefusedError ? Object.assign(err, { message: `backup refused: ${err.message}` }) : err;
  });
  announceDataDir(dir, { json: opts.json });
  if (opts.json) {
    printJson({ backup: to, ...manifest });
    return;
  }
  for (const line of alignColumns([['backup', to], ...summary(manifest)])) process.stdout.write(line + '\n');
  for (const lost of lostFiles(manifest)) process.stderr.write(`perch: warning: ${lost} is in the database but not on disk; it is not in the backup\n`);
}

export async function restoreCommand(source: string, opts: CommonOptions): Promise<void> {
  const config = commandConfig(opts);
  const dir = dataDirPath(opts);
  let restored;
  try {
    restored = await restoreBackup(resolve(source), dir, config);
  } catch (err) {
    if (err instanceof NotABackupError) throw new UsageError(err.message);
    if (err instanceof RefusedError) throw new Error(`restore refused: ${err.message}; nothing was changed`);
    throw err;
  }
  announceDataDir(dir, { created: true });
  const rows = [['restored from', resolve(source)], ...summary(restored.manifest)];
  if (restored.applied.length) rows.push(['migrated', restored.applied.map((m) => `${String(m.version).padStart(3, '0')} ${m.name}`).join(', ')]);
  rows.push(['hot state', 'rebuilt from the database; perch serve fills the code pool and caches']);
  for (const line of alignColumns(rows)) process.stdout.write(line + '\n');
}
