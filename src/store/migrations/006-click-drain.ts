import type { Migration } from './index';

// Where the click drain stands (links/clicks.ts): the queue keys of the batch it is committing,
// in how many parts of at most how many links, and how many of them are committed. Each part's transaction updates it, so a
// drain that a crash interrupted resumes after the last committed part instead of counting the
// whole batch again.
export const clickDrain: Migration = {
  version: 6,
  name: 'click drain progress',
  sql: `
    CREATE TABLE click_drain (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      keys TEXT NOT NULL,
      parts INTEGER NOT NULL,
      part_links INTEGER NOT NULL,
      done INTEGER NOT NULL
    );
  `,
};
