import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { presentedBearer, presentedKey } from '../../shared/http/credentials.ts';
import { apiEvent } from '../support/http.ts';

const KEY = 'dyk_01jabcdefghjkmnpqrstvwxyz0_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const OTHER = 'dyk_01jzzzzzzzzzzzzzzzzzzzzzz0_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const QUERY = 'dyk_01jqqqqqqqqqqqqqqqqqqqqqq0_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC';

const ev = (headers: Record<string, string>, query?: Record<string, string>) => apiEvent({ headers, ...(query ? { query } : {}) });

describe('presentedKey', () => {
  it('takes the Bearer credential first, over X-API-Key and the query', () => {
    const e = ev({ authorization: `Bearer ${KEY}`, 'x-api-key': OTHER }, { api_key: QUERY });
    expect(presentedKey(e, true)).toBe(KEY);
    expect(presentedKey(e, false)).toBe(KEY);
  });

  it('accepts the Bearer scheme in any case and with extra blanks', () => {
    for (const h of [`bearer ${KEY}`, `BEARER ${KEY}`, `Bearer   ${KEY}`, `Bearer\t${KEY}`, `Bearer ${KEY} `]) {
      expect(presentedKey(ev({ authorization: h }), false), JSON.stringify(h)).toBe(KEY);
    }
  });

  it('takes X-API-Key over the query', () => {
    const e = ev({ 'x-api-key': OTHER }, { api_key: QUERY });
    expect(presentedKey(e, true)).toBe(OTHER);
    expect(presentedKey(ev({ 'x-api-key': `  ${OTHER} ` }), false)).toBe(OTHER);
  });

  it('reads the api_key query parameter only where the endpoint allows it', () => {
    const e = ev({}, { api_key: QUERY, other: 'x' });
    expect(presentedKey(e, true)).toBe(QUERY);
    expect(presentedKey(e, false)).toBeUndefined();
  });

  it('is undefined when nothing is presented', () => {
    expect(presentedKey(ev({}), true)).toBeUndefined();
    expect(presentedKey(ev({}), false)).toBeUndefined();
    expect(presentedKey(ev({}, { other: QUERY }), true)).toBeUndefined();
  });

  it('answers "" for a malformed Authorization header, never falling through to X-API-Key or the query', () => {
    for (const h of [
      '',
      ' ',
      'Bearer',
      'Bearer ',
      `Basic ${KEY}`,
      KEY,
      `Bearer ${KEY} extra`,
      `Token ${KEY}`,
      `Bearer: ${KEY}`,
      `Bearer${KEY}`,
    ]) {
      const e = ev({ authorization: h, 'x-api-key': OTHER }, { api_key: QUERY });
      expect(presentedKey(e, true), JSON.stringify(h)).toBe('');
      expect(presentedKey(e, false), JSON.stringify(h)).toBe('');
    }
  });

  it('answers "" for a blank X-API-Key, not falling through to the query', () => {
    expect(presentedKey(ev({ 'x-api-key': '   ' }, { api_key: QUERY }), true)).toBe('');
  });

  it('never throws, and whatever it returns was actually presented', () => {
    fc.assert(
      fc.property(
        fc.option(
          fc.oneof(
            fc.string(),
            fc.string().map((s) => `Bearer ${s}`),
          ),
          { nil: undefined },
        ),
        fc.option(fc.string(), { nil: undefined }),
        fc.option(fc.string(), { nil: undefined }),
        fc.boolean(),
        (auth, header, query, allowQuery) => {
          const headers: Record<string, string> = {};
          if (auth !== undefined) headers.authorization = auth;
          if (header !== undefined) headers['x-api-key'] = header;
          const got = presentedKey(ev(headers, query === undefined ? undefined : { api_key: query }), allowQuery);
          if (auth !== undefined) {
            expect(got === '' || auth.includes(got as string)).toBe(true);
          } else if (header !== undefined) {
            expect(got).toBe(header.trim());
          } else {
            expect(got).toBe(allowQuery ? query : undefined);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('presentedBearer', () => {
  it('is the Bearer token, "" when the header is unusable, undefined when absent; X-API-Key is ignored', () => {
    expect(presentedBearer(ev({ authorization: `Bearer ${KEY}` }))).toBe(KEY);
    expect(presentedBearer(ev({ authorization: `Basic ${KEY}` }))).toBe('');
    expect(presentedBearer(ev({ authorization: '' }))).toBe('');
    expect(presentedBearer(ev({ 'x-api-key': KEY }))).toBeUndefined();
    expect(presentedBearer(ev({}, { api_key: KEY }))).toBeUndefined();
  });
});
