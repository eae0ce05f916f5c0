import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchPath } from '../../shared/http/match.ts';

describe('matchPath', () => {
  it('matches literal templates exactly', () => {
    expect(matchPath('/api/health', '/api/health')).toEqual({});
    expect(matchPath('/api/health', '/api/healthz')).toBeUndefined();
    expect(matchPath('/api/health', '/api/Health')).toBeUndefined();
    expect(matchPath('/api/health', '/api/health/')).toBeUndefined();
    expect(matchPath('/api/v1/openapi.json', '/api/v1/openapi.json')).toEqual({});
    expect(matchPath('/', '/')).toEqual({});
  });

  it('extracts parameters', () => {
    expect(matchPath('/api/keys/{id}', '/api/keys/01jabc')).toEqual({ id: '01jabc' });
    expect(matchPath('/api/v1/workflows/{workflowId}/runs/{executionId}', '/api/v1/workflows/wf_1/runs/ex_2')).toEqual({
      workflowId: 'wf_1',
      executionId: 'ex_2',
    });
    expect(matchPath('/api/keys/{id}', '/api/members/01jabc')).toBeUndefined();
  });

  it('URL-decodes parameter values', () => {
    expect(matchPath('/a/{x}', '/a/hello%20world')).toEqual({ x: 'hello world' });
    expect(matchPath('/a/{x}', '/a/%E2%9C%93')).toEqual({ x: '✓' });
    expect(matchPath('/a/{x}', '/a/a%2Fb')).toEqual({ x: 'a/b' });
    expect(matchPath('/a/{x}', '/a/a+b')).toEqual({ x: 'a+b' });
  });

  it('answers undefined, without throwing, for malformed percent-encoding', () => {
    for (const bad of ['%', '%E', '%zz', '%E2%9C', '%C3%28', '%FF', 'ok%']) {
      expect(() => matchPath('/a/{x}', `/a/${bad}`)).not.toThrow();
      expect(matchPath('/a/{x}', `/a/${bad}`), bad).toBeUndefined();
    }
  });

  it('refuses a different number of segments', () => {
    expect(matchPath('/api/keys/{id}', '/api/keys')).toBeUndefined();
    expect(matchPath('/api/keys/{id}', '/api/keys/a/b')).toBeUndefined();
    expect(matchPath('/api/keys/{id}', '/api/keys/a/')).toBeUndefined();
    expect(matchPath('/api/keys', '/api/keys/a')).toBeUndefined();
  });

  it('refuses an empty parameter segment', () => {
    expect(matchPath('/api/keys/{id}', '/api/keys/')).toBeUndefined();
    expect(matchPath('/a/{x}/b', '/a//b')).toBeUndefined();
    expect(matchPath('/a/{x}/{y}', '/a/1/')).toBeUndefined();
  });

  it('round-trips any encoded value and never throws on arbitrary paths', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1 }), (value) => {
        expect(matchPath('/api/keys/{id}', `/api/keys/${encodeURIComponent(value)}`)).toEqual({ id: value });
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string(), fc.string({ unit: 'binary' }), (template, path) => {
        const r = matchPath(template, path);
        expect(r === undefined || typeof r === 'object').toBe(true);
        expect(() => matchPath('/a/{x}/{y}', path)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
