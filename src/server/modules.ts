// The background modules of the supervisor: each capability that has background work adds its
// module here.
import type { BackgroundModule } from './background';
import { socialModule } from '../social/outbox';
import { linksBackground } from '../links/background';

export const BACKGROUND_MODULES: BackgroundModule[] = [socialModule, linksBackground];
