import ipaddr from 'ipaddr.js';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { config } from '../config.ts';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

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

let trusted: { source: readonly string[]; ranges: Range[] } | undefined;
const trustedRanges = () => {
  const source = config().TRUSTED_PROXIES;
  if (trusted?.source !== source) trusted = { source, ranges: source.map(parseRange).filter((r) => r !== undefined) };
  return trusted.ranges;
};

/**
 * The client's address: the connection's address, unless that peer is a trusted proxy, in which case
 * the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy (an unparsable entry is
 * returned as is, so it matches no allowlist).
 */
export function clientIp(event: APIGatewayProxyEventV2): string {
  const peer = event.requestContext.http.sourceIp;
  const ranges = trustedRanges();
  if (ranges.length === 0 || !inRanges(peer, ranges)) return peer;
  const chain = (event.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i] as string;
    if (!inRanges(hop, ranges)) return parseIp(hop)?.toString() ?? hop.slice(0, 64);
  }
  return chain[0]?.slice(0, 64) ?? peer;
}
