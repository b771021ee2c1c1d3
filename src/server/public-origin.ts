// The public origin the server runs with (core/public-origin.ts): derived from the port it really
// listens on when server.public_origin is "", checked against it when set.
import { hostname, networkInterfaces } from 'node:os';
import type { Config } from '../config';
import { derivePublicOrigin, isWildcardHost, publicOriginMismatch } from '../core/public-origin';
import { log } from '../log';

/**
 * The machine's addresses, needed only when perch listens on every interface. Reading them takes
 * a netlink socket, which a sandbox (systemd's RestrictAddressFamilies) may refuse: then none
 * are known, and an origin naming one is taken for a proxy's.
 */
function localAddresses(host: string): string[] {
  if (!isWildcardHost(host)) return [];
  try {
    return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
  } catch {
    return [];
  }
}

/** The origin for short URLs and the own-origin guard, with a warning where it cannot be right. */
export function effectivePublicOrigin(config: Config, port: number): string {
  const { host, public_origin: configured } = config.server;
  if (configured === '') {
    const derived = derivePublicOrigin(host, port, hostname());
    if (isWildcardHost(host)) {
      log.warn('server.public_origin is not set and perch listens on every interface: short URLs use the machine name; set server.public_origin to the address clients use', { public_origin: derived });
    }
    return derived;
  }
  const mismatch = publicOriginMismatch(configured, { host, port, localAddresses: localAddresses(host) });
  if (mismatch) {
    log.warn(`server.public_origin does not lead to this server: ${mismatch}; short URLs will not work. Set it to the address clients use, or to "" to derive it`, { public_origin: configured, host, port });
  }
  return configured;
}
