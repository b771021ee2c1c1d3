// The lane (server/background.ts, BackgroundJob.lane) of the periodic upkeep of every capability
// that hands it to the background pool: the click drain, the anomaly detector, the link expiry
// sweep, the media upkeep. A module of its own: capability modules name it, and every thread loads
// them, while the background jobs' module (and piscina with it) is the supervisor's alone.
export const UPKEEP_LANE = 'upkeep';
