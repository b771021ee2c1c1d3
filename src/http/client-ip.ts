// The client address of a request: the socket's peer, unless that peer is a configured trusted
// proxy, in which case the right-most X-Forwarded-For entry that is not itself a trusted proxy.
// Taking the left-most entry would let any client pick its own rate-limit identity.

/** uWS renders IPv4 peers of a dual-stack socket as IPv4-mapped IPv6; show them as IPv4. */
export function normaliseIp(ip: string): string {
  const s = ip.trim().toLowerCase();
  if (s.startsWith('::ffff:') && s.includes('.')) return s.slice(7);
  if (/^0000:0000:0000:0000:0000:ffff:[0-9a-f]{4}:[0-9a-f]{4}$/.test(s)) {
    const p = s.split(':');
    const hi = parseInt(p[6], 16);
    const lo = parseInt(p[7], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return s;
}

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
