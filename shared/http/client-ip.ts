import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { config } from '../config.ts';
import { inRanges, parseIp, parseRange, type Range } from '../ip-ranges.ts';

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
