// Schema of the media capability. Its table came with the microblog's migration 3
// (social/migrations.ts); what media adds since is here. Released migrations are never edited.
import type { Migration } from '../store/migration';

// Each user's uploads by size, so that the bytes a user has stored (their quota, media/quota.ts)
// are summed from the index alone, without reading the table.
export const mediaOwner: Migration = {
  version: 12,
  name: 'media by owner',
  sql: `CREATE INDEX media_owner ON media(owner_id, size);`,
};

export const MIGRATIONS: readonly Migration[] = [mediaOwner];
