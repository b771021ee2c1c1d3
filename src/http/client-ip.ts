// The client address of a request: the socket's peer, unless that peer is a configured trusted
// proxy, in which case the right-most X-Forwarded-For entry that is not itself a trusted proxy.
// Taking the left-most entry would let any client pick its own rate-limit identity.
import { normaliseIp } from '../core/ip-literal';

export function clientIp(peerIp: string, forwardedFor: string, trustedProxies: ReadonlySet<string>): string {
  const peer = normaliseIp(peerIp);
  if (trustedProxies.size === 0 || !trustedProxies.has(peer) || !forwardedFor) return peer;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normaliseIp(hops[i]);
    if (hop && !trustedProxies.has(hop)) return hop;
  }
  return peer;
}
