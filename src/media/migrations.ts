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

// Uploads by time, so that the sweep of files never posted (media/upkeep.ts) reads only the uploads
// of the span it has not looked at yet.
export const mediaCreated: Migration = {
  version: 13,
  name: 'media by time',
  sql: `CREATE INDEX media_created ON media(created_at);`,
};

export const MIGRATIONS: readonly Migration[] = [mediaOwner, mediaCreated];
