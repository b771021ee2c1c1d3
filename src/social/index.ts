// The microblog capability of one HTTP thread: its service, timeline reader and media files,
// and the routes they answer.
import type { Config } from '../config';
import type { AccountStore } from '../accounts/store';
import type { Route } from '../http/router';
import type { Sqlite } from '../store/sqlite';
import type { HotStore } from '../store/lmdb';
import type { CursorCodec } from '../core/cursor';
import { MediaFiles } from '../media/store';
import { mediaRoutes } from '../media/routes';
import { SocialService } from './service';
import type { WriterClient } from './group-commit';
import { SocialStore } from './store';
import { HomeTimelineReader } from './timeline';
import { socialRoutes } from './routes';

export interface Social {
  service: SocialService;
  timeline: HomeTimelineReader;
  media: MediaFiles;
  routes(): Route[];
}

export function openSocial(config: Config, dataDir: string, sqlite: Sqlite, hot: HotStore, accounts: AccountStore, newId: () => string, writes: WriterClient, cursors: CursorCodec): Social {
  const store = new SocialStore(sqlite);
  const service = new SocialService(store, accounts, newId, writes);
  const timeline = new HomeTimelineReader(store, hot, config);
  const media = new MediaFiles(dataDir);
  return {
    service,
    timeline,
    media,
    routes: () => [...socialRoutes(service, timeline, cursors), ...mediaRoutes(service, media, newId)],
  };
}
