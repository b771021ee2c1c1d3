// The unit a per-client limit counts by. An IPv4 address is one client. An IPv6 host is usually
// given a whole /64 (SLAAC, privacy addresses, a home network's prefix) and can move within it at
// will, so a limit keyed by the full address would give it 2^64 fresh allowances: IPv6 clients
// are counted by their /64. An IPv6 address that wraps an IPv4 one (IPv4-mapped, as uWS gives the
// IPv4 clients of a listener on `::`, or NAT64's well-known prefix, which carries every IPv4
// client of a translator in one /64) is the IPv4 client.
import { ipv6Groups, normaliseIp, wrappedIpv4 } from './ip-literal';

/** `address` as the client a limit counts: itself for IPv4, `xxxx:xxxx:xxxx:xxxx::/64` for IPv6. */
export function clientNetwork(address: string): string {
  // IPv4 first, without parsing: it runs on every redirect. normaliseIp reads the two IPv4-mapped
  // forms uWS and proxies write without parsing the groups either.
  if (address.indexOf(':') === -1) return address;
  const ip = normaliseIp(address);
  if (ip.indexOf(':') === -1) return ip;
  const groups = ipv6Groups(ip.replace(/%.*$/, ''));
  if (groups === null) return address;
  return wrappedIpv4(groups) ?? `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
