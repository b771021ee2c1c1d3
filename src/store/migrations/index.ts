// Versioned schema migrations, applied in order and recorded in schema_migrations.
// A migration is never edited once released; a change of schema is a new entry.
import { accounts } from './001-accounts';
import { links } from './002-links';
import { social } from './003-social';
import { authorIndex } from './004-author-index';
import { serverSecrets } from './005-server-secrets';
import { clickDrain } from './006-click-drain';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [accounts, links, social, authorIndex, serverSecrets, clickDrain];
