import dns from 'node:dns';
import net from 'node:net';
import { inRanges, parseIp, parseRange } from '../ip-ranges.ts';
import { StepError } from '../step-error.ts';

/**
 * Where outgoing requests may go (the SSRF policy shared by `http_request` steps, event deliveries
 * and channel adapters): the address rules, the operator allowlist, and a DNS answer pinned so the
 * connection goes to the checked address.
 */
export type Range = NonNullable<ReturnType<typeof parseRange>>;
export type Allowlist = { names: ReadonlySet<string>; ranges: readonly Range[] };
export type Resolved = { address: string; family: number };

const range = (s: string): Range => {
  const r = parseRange(s);
  if (!r) throw new Error(`bad built-in range ${s}`);
  return r;
};
/** IANA global unicast; everything else in IPv6 is reserved, special or unallocated (e.g. ::/96, IPv4-compatible). */
const GLOBAL_UNICAST_V6 = [range('2000::/3')];
const METADATA = [range('169.254.169.254'), range('fd00:ec2::254')];

/**
 * Whether a request may not go to this address (unless the operator allowlist permits it): anything
 * ipaddr.js does not classify as `unicast` (private, loopback, link-local, unique-local, CGNAT,
 * multicast, reserved, 6to4, Teredo, NAT64, ...), IPv6 outside 2000::/3, and the cloud metadata
 * addresses. IPv4-mapped IPv6 is judged as its IPv4 address; an unparsable address is forbidden.
 */
export function isForbiddenAddress(ip: string): boolean {
  const a = parseIp(ip);
  if (!a) return true;
  if (a.range() !== 'unicast') return true;
  if (a.kind() === 'ipv6' && !inRanges(ip, GLOBAL_UNICAST_V6)) return true;
  return inRanges(ip, METADATA);
}

/** Host names compare lower-case, without a trailing dot (URL hosts are already lower-case and punycode). */
const normalizeHost = (h: string) => h.trim().toLowerCase().replace(/\.$/, '');

export function compileAllowlist(entries: readonly string[]): Allowlist {
  const names = new Set<string>();
  const ranges: Range[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const r = parseRange(entry);
    if (r) ranges.push(r);
    else names.add(normalizeHost(entry));
  }
  return { names, ranges };
}

/** Parse and check the shape of a URL (scheme, no credentials); the target is checked separately. */
export function checkUrl(raw: string | URL, what: string): URL {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new StepError('INVALID_URL', `${what} is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new StepError('INVALID_URL', `${what} must use https`);
  if (url.username || url.password) throw new StepError('INVALID_URL', `${what} must not contain credentials`);
  if (!url.hostname) throw new StepError('INVALID_URL', `${what} has no host`);
  return url;
}

export const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

function lookupAll(host: string): Promise<Resolved[]> {
  return new Promise((resolve, reject) => {
    dns.lookup(host, { all: true }, (err, addresses) => {
      if (err) reject(err);
      else if (addresses.length === 0) reject(new Error(`no address for ${host}`));
      else resolve(addresses);
    });
  });
}

/**
 * Resolve the target once and decide: permitted by the allowlist (its name is listed, or every
 * address is inside a listed range), else refused if any address is forbidden, else refused if it
 * is plain http. The connection then goes to these addresses only (see `pinnedLookup`).
 */
export async function resolveTarget(url: URL, allow: Allowlist, signal: AbortSignal): Promise<Resolved[]> {
  const host = bareHost(url);
  const forbidden = () => new StepError('TARGET_FORBIDDEN', `${url.hostname} resolves to a private or reserved address`);
  const insecure = () => new StepError('INSECURE_URL', `${url.hostname} is not allowlisted for http; use https`);
  const family = net.isIP(host);
  if (family !== 0) {
    // An IP literal: Node connects to it without calling `lookup`, so this check is the only one.
    if (allow.names.has(normalizeHost(url.hostname)) || inRanges(host, allow.ranges)) return [{ address: host, family }];
    if (isForbiddenAddress(host)) throw forbidden();
    if (url.protocol === 'http:') throw insecure();
    return [{ address: host, family }];
  }
  const listed = allow.names.has(normalizeHost(host));
  // Plain http that no range could permit: refuse without even asking DNS.
  if (!listed && url.protocol === 'http:' && allow.ranges.length === 0) throw insecure();
  const addresses = await abortable(lookupAll(host), signal);
  if (listed || addresses.every((a) => inRanges(a.address, allow.ranges))) return addresses;
  if (addresses.some((a) => isForbiddenAddress(a.address))) throw forbidden();
  if (url.protocol === 'http:') throw insecure();
  return addresses;
}

/** Names that always resolve to loopback (RFC 6761 §6.3). */
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Why a request to `url` can never pass these rules, or undefined if it may: decided for an IP
 * literal and a localhost name only, whose addresses no DNS change moves (the check a target gets
 * when it is saved); any other name is decided at each request.
 */
export async function neverReachable(url: URL, allow: Allowlist): Promise<string | undefined> {
  const host = normalizeHost(bareHost(url));
  if (net.isIP(host) === 0 && !isLocalhostName(host)) return undefined;
  try {
    await resolveTarget(url, allow, AbortSignal.timeout(2000));
    return undefined;
  } catch (e) {
    if (!(e instanceof StepError)) return undefined; // no answer for a localhost name: decided at each request
    if (e.code === 'TARGET_FORBIDDEN')
      return `${url.hostname} is a private, loopback or reserved address, which deliveries reach only if the operator's HTTP_STEP_ALLOWLIST permits it`;
    if (e.code === 'INSECURE_URL') return `${url.hostname} takes plain http only if HTTP_STEP_ALLOWLIST lists it; use https`;
    return e.message;
  }
}

/** A `lookup` for node:net that answers with the already-checked addresses: no second DNS query. */
export function pinnedLookup(addresses: Resolved[]): net.LookupFunction {
  const first = addresses[0] as Resolved;
  return ((_host: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  }) as net.LookupFunction;
}

/** Reject with the signal's reason as soon as it is aborted. */
export function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
