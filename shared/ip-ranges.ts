import ipaddr from 'ipaddr.js';

/** IP addresses and CIDR ranges: allowlists (webhooks), egress rules (http_request), trusted proxies. */
export type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parse an address, normalising IPv4-mapped IPv6 (::ffff:1.2.3.4) to IPv4; undefined if invalid. */
export function parseIp(s: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(s)) return undefined;
  const a = ipaddr.parse(s);
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a;
}

/** Parse an address or CIDR into a range (a single address is a /32 or /128); undefined if invalid. */
export function parseRange(s: string): Range | undefined {
  // A zone id (`fe80::1%eth0`) names an interface of one host: it means nothing in an allowlist.
  if (s.includes('%')) return undefined;
  try {
    if (s.includes('/')) {
      if (!ipaddr.isValidCIDR(s)) return undefined;
      const [addr, bits] = ipaddr.parseCIDR(s);
      const a = parseIp(addr.toString());
      if (!a) return undefined;
      // An IPv4-mapped CIDR (::ffff:a.b.c.d/n) is the IPv4 range /n-96; one wider than /96 reaches
      // beyond IPv4-mapped space and means nothing sensible for an allowlist, so it is invalid.
      if (a.kind() !== addr.kind()) return bits >= 96 ? [a, bits - 96] : undefined;
      return [a, bits];
    }
    const a = parseIp(s);
    return a ? [a, a.kind() === 'ipv4' ? 32 : 128] : undefined;
  } catch {
    return undefined;
  }
}

export function inRanges(ip: string, ranges: readonly Range[]): boolean {
  const a = parseIp(ip);
  return !!a && ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
}

/**
 * The unit a client address is counted in by the failure limits: an IPv4 address as is, an IPv6
 * address by its /64 (one subscriber's network: a host picks any of its 2^64 addresses at will), as
 * `2001:db8:1:2::/64`. Anything unparsable is counted as given (at most 64 characters).
 */
export function addressUnit(ip: string): string {
  const a = parseIp(ip);
  if (!a) return ip.slice(0, 64);
  if (a.kind() === 'ipv4') return a.toString();
  const parts = (a as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
