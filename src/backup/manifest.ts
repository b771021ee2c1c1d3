// manifest.json of a backup: what it holds and how it was made. Written last, so a directory
// without one is not a (complete) backup.
import { z } from 'zod';

export const MANIFEST_FILE = 'manifest.json';
export const DATABASE_FILE = 'perch.db';
export const MANIFEST_FORMAT = 1;

/**
 * Why the hot store is not in a backup, said in every manifest: LMDB holds only what SQLite can
 * give back (caches, the code pool, home timelines, rate-limit buckets, node leases), except
 * clicks not yet aggregated, a few seconds' worth; and a copy of it taken while the server
 * writes would not be consistent with the database snapshot anyway.
 */
export const HOT_STORE_NOTE =
  'lmdb/ is not included: it holds hot state rebuilt from perch.db (caches, code pool, home timelines, rate-limit buckets, node leases); clicks not yet aggregated (seconds) are not in a backup';

export const manifestSchema = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  perch_version: z.string(),
  schema_version: z.number().int().nonnegative(),
  created_at: z.string(),
  source_data_dir: z.string(),
  database: z.strictObject({ file: z.literal(DATABASE_FILE), bytes: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
  files: z.strictObject({
    count: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    /** Files the database refers to that are not in the backup (a restore expects them absent). */
    missing: z.array(z.string()),
    /**
     * Those of `missing` deleted after the snapshot (the live database no longer referred to them
     * when they were copied), not lost. Absent from backups made before it was kept.
     */
    deleted: z.array(z.string()).optional(),
    /** Each file's SHA-256, by its path in the backup. Absent from backups made before it was kept. */
    sha256: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)).optional(),
  }),
  row_counts: z.record(z.string(), z.number().int().nonnegative()),
  not_included: z.string(),
});

export type Manifest = z.infer<typeof manifestSchema>;
