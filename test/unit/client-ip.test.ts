import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { clientIp } from '../../shared/http/client-ip.ts';
import { inRanges, parseIp, parseRange } from '../../shared/ip-ranges.ts';
import { apiEvent } from '../support/http.ts';

const original = process.env.TRUSTED_PROXIES;
const trust = (value: string | undefined) => {
  if (value === undefined) delete process.env.TRUSTED_PROXIES;
  else process.env.TRUSTED_PROXIES = value;
  resetConfig();
};
afterEach(() => trust(original));
afterAll(() => trust(original));

const from = (sourceIp: string, xff?: string) => apiEvent({ sourceIp, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });
const ranges = (...s: string[]) =>
  s.map((r) => {
    const parsed = parseRange(r);
    if (!parsed) throw new Error(`test range ${r} did not parse`);
    return parsed;
  });

describe('clientIp', () => {
  it('uses the connection address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    for (const value of [undefined, '', ' ']) {
      trust(value);
      expect(clientIp(from('203.0.113.9', '1.1.1.1, 2.2.2.2'))).toBe('203.0.113.9');
      expect(clientIp(from('10.1.2.3', '1.1.1.1'))).toBe('10.1.2.3');
      expect(clientIp(from('2001:db8::1', '1.1.1.1'))).toBe('2001:db8::1');
    }
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    trust('10.0.0.0/8');
    expect(clientIp(from('203.0.113.9', '1.1.1.1, 10.0.0.5'))).toBe('203.0.113.9');
    expect(clientIp(from('11.0.0.1', '1.1.1.1'))).toBe('11.0.0.1');
  });

  it('behind a trusted proxy, picks the rightmost X-Forwarded-For entry that is not a trusted proxy', () => {
    trust('10.0.0.0/8');
    expect(clientIp(from('10.1.2.3', '1.1.1.1, 2.2.2.2, 10.0.0.5'))).toBe('2.2.2.2');
    expect(clientIp(from('10.1.2.3', '1.1.1.1, 2.2.2.2'))).toBe('2.2.2.2');
    expect(clientIp(from('10.1.2.3', '1.1.1.1'))).toBe('1.1.1.1');
    expect(clientIp(from('10.1.2.3', '  1.1.1.1 ,2.2.2.2 ,  10.9.9.9  '))).toBe('2.2.2.2');
    expect(clientIp(from('10.1.2.3', '1.1.1.1,,2.2.2.2,'))).toBe('2.2.2.2');
  });

  it('a spoofed leftmost entry cannot replace the address the trusted proxy appended', () => {
    trust('10.0.0.0/8');
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), { maxLength: 5 }), fc.ipV4(), (spoofed, real) => {
        fc.pre(!real.startsWith('10.'));
        const xff = [...spoofed.map((s) => s.replace(/,/g, '')), real, '10.0.0.7'].join(', ');
        expect(clientIp(from('10.1.2.3', xff))).toBe(real);
      }),
      { numRuns: 200 },
    );
  });

  it('with a trusted peer and no (or only trusted) X-Forwarded-For entries, falls back sensibly', () => {
    trust('10.0.0.0/8');
    expect(clientIp(from('10.1.2.3'))).toBe('10.1.2.3');
    expect(clientIp(from('10.1.2.3', ''))).toBe('10.1.2.3');
    expect(clientIp(from('10.1.2.3', '10.0.0.1, 10.0.0.2'))).toBe('10.0.0.1');
  });

  it('treats an IPv4-mapped IPv6 peer as the IPv4 address', () => {
    trust('10.0.0.0/8');
    expect(clientIp(from('::ffff:10.1.2.3', '1.1.1.1, 2.2.2.2, 10.0.0.5'))).toBe('2.2.2.2');
    expect(clientIp(from('10.1.2.3', '1.1.1.1, ::ffff:10.0.0.5'))).toBe('1.1.1.1');
    expect(clientIp(from('::ffff:11.1.2.3', '1.1.1.1'))).toBe('::ffff:11.1.2.3');
  });

  it('supports several ranges, IPv6 ones included', () => {
    trust('10.0.0.0/8, 192.168.1.1 ,fd00::/8');
    expect(clientIp(from('fd12::1', '1.1.1.1, 192.168.1.1'))).toBe('1.1.1.1');
    expect(clientIp(from('192.168.1.1', '2001:db8::5, fd00::9'))).toBe('2001:db8::5');
    expect(clientIp(from('192.168.1.2', '1.1.1.1'))).toBe('192.168.1.2');
  });

  it('follows a change of TRUSTED_PROXIES after resetConfig()', () => {
    trust('10.0.0.0/8');
    expect(clientIp(from('10.1.2.3', '1.1.1.1'))).toBe('1.1.1.1');
    trust('192.168.0.0/16');
    expect(clientIp(from('10.1.2.3', '1.1.1.1'))).toBe('10.1.2.3');
  });

  it('returns an unparsable hop as is (so it matches no allowlist), never throws', () => {
    trust('10.0.0.0/8');
    expect(clientIp(from('10.1.2.3', '1.1.1.1, not-an-ip'))).toBe('not-an-ip');
    fc.assert(
      fc.property(fc.string(), fc.oneof(fc.constant('10.1.2.3'), fc.ipV4(), fc.ipV6()), (xff, peer) => {
        expect(typeof clientIp(from(peer, xff))).toBe('string');
      }),
      { numRuns: 300 },
    );
  });
});

describe('parseIp / parseRange / inRanges', () => {
  it('parses addresses and normalises IPv4-mapped IPv6', () => {
    expect(parseIp('10.1.2.3')?.toString()).toBe('10.1.2.3');
    expect(parseIp('::ffff:10.1.2.3')?.kind()).toBe('ipv4');
    expect(parseIp('::ffff:10.1.2.3')?.toString()).toBe('10.1.2.3');
    expect(parseIp('2001:db8::1')?.kind()).toBe('ipv6');
    expect(parseIp('nope')).toBeUndefined();
    expect(parseIp('')).toBeUndefined();
  });

  it('parses single addresses and CIDRs of both families', () => {
    const show = (s: string) => parseRange(s)?.map(String);
    expect(show('10.0.0.1')).toEqual(['10.0.0.1', '32']);
    expect(show('10.0.0.0/8')).toEqual(['10.0.0.0', '8']);
    expect(show('0.0.0.0/0')).toEqual(['0.0.0.0', '0']);
    expect(show('2001:db8::1')).toEqual(['2001:db8::1', '128']);
    expect(show('2001:db8::/32')).toEqual(['2001:db8::', '32']);
    expect(show('::/0')).toEqual(['::', '0']);
    expect(show('::ffff:10.0.0.0/104')).toEqual(['10.0.0.0', '8']);
    expect(show('::ffff:10.1.2.3')).toEqual(['10.1.2.3', '32']);
  });

  it('rejects garbage', () => {
    for (const s of [
      '',
      ' ',
      'abc',
      '/',
      '10.0.0.0/',
      '/8',
      '10.0.0.0/33',
      '2001:db8::/129',
      '10.0.0.0/8/8',
      '256.0.0.1',
      '1.2.3.4.5',
      '10.0.0.0/-1',
      '::1::1',
      'fe80::1%eth0/64x',
      'fe80::1%eth0',
      'fe80::1%25eth0',
      'fe80::%1/64',
      'fe80::1%',
    ]) {
      expect(parseRange(s), JSON.stringify(s)).toBeUndefined();
    }
  });

  it('never throws on arbitrary input', () => {
    const noise = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc
        .tuple(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), fc.oneof(fc.integer({ min: -200, max: 300 }).map(String), fc.string()))
        .map(([a, b]) => `${a}/${b}`),
    );
    fc.assert(
      fc.property(noise, (s) => {
        const r = parseRange(s);
        if (r) {
          expect(['ipv4', 'ipv6']).toContain(r[0].kind());
          expect(r[1]).toBeLessThanOrEqual(r[0].kind() === 'ipv4' ? 32 : 128);
        }
        expect(typeof inRanges(s, ranges('10.0.0.0/8', 'fd00::/8'))).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });

  it('accepts every valid address and CIDR', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 0, max: 32 }), (ip, bits) => {
        expect(parseRange(ip)?.[1]).toBe(32);
        expect(parseRange(`${ip}/${bits}`)?.[1]).toBe(bits);
        expect(inRanges(ip, ranges(`${ip}/${bits}`))).toBe(true);
        expect(inRanges(ip, ranges(ip))).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.ipV6(), fc.integer({ min: 0, max: 128 }), (ip, bits) => {
        const single = parseRange(ip);
        expect(single).toBeDefined();
        expect(single?.[1]).toBe(single?.[0].kind() === 'ipv4' ? 32 : 128);
        expect(inRanges(ip, ranges(ip))).toBe(true);
        const cidr = parseRange(`${ip}/${bits}`);
        // An IPv4-mapped range wider than /96 is refused (it reaches beyond IPv4-mapped space).
        if (single?.[0].kind() === 'ipv4' && bits < 96) return void expect(cidr).toBeUndefined();
        expect(cidr).toBeDefined();
        // Every range holds the address it was written with.
        expect(inRanges(ip, [cidr!])).toBe(true);
      }),
    );
  });

  it('matches IPv4-mapped addresses against IPv4 rules, and keeps the families apart otherwise', () => {
    const v4 = ranges('10.0.0.0/8');
    expect(inRanges('10.1.2.3', v4)).toBe(true);
    expect(inRanges('::ffff:10.1.2.3', v4)).toBe(true);
    expect(inRanges('::ffff:a01:203', v4)).toBe(true);
    expect(inRanges('::ffff:11.1.2.3', v4)).toBe(false);
    expect(inRanges('11.0.0.0', v4)).toBe(false);
    expect(inRanges('2001:db8::1', v4)).toBe(false);
    expect(inRanges('::a01:203', v4)).toBe(false); // IPv4-compatible, not mapped
    expect(inRanges('10.1.2.3', ranges('::ffff:10.0.0.0/104'))).toBe(true);
    expect(inRanges('11.1.2.3', ranges('::ffff:10.0.0.0/104'))).toBe(false);
    expect(inRanges('10.1.2.3', ranges('::/0'))).toBe(false);
    expect(inRanges('2001:db8::1', ranges('2001:db8::/32'))).toBe(true);
    expect(inRanges('2001:db9::1', ranges('2001:db8::/32'))).toBe(false);
    expect(inRanges('garbage', v4)).toBe(false);
    expect(inRanges('10.1.2.3', [])).toBe(false);
  });
});
