// The background modules of the supervisor: each capability that has background work adds its
// module here.
import type { BackgroundModule } from './background';
import { socialModule } from '../social/outbox';

export const BACKGROUND_MODULES: BackgroundModule[] = [socialModule];
