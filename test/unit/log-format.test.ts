import { afterEach, describe, expect, it, vi } from 'vitest';
import { logFormat, ServiceLogger, TextLogFormatter } from '../../shared/log-format.ts';

/** What a logger wrote to stdout and stderr while `fn` ran. */
function written(fn: () => void) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => out.push(String(chunk)) > 0);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => err.push(String(chunk)) > 0);
  try {
    fn();
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  return { out: out.join(''), err: err.join('') };
}

const text = () => new ServiceLogger({ serviceName: 'flowgate', logLevel: 'DEBUG', logFormatter: new TextLogFormatter() });
const request = { method: 'GET', path: '/api/v1/executions', query: '', status: 400, ms: 5, sourceIp: '127.0.0.1' };

describe('LOG_FORMAT', () => {
  afterEach(() => vi.useRealTimers());

  it('is json unless it says text; anything else fails, naming it', () => {
    expect(logFormat(undefined)).toBe('json');
    expect(logFormat('')).toBe('json');
    expect(logFormat('json')).toBe('json');
    expect(logFormat('text')).toBe('text');
    expect(() => logFormat('pretty')).toThrow('LOG_FORMAT must be json or text, got "pretty"');
  });

  it('json: Powertools JSON lines, as on AWS', () => {
    const line = { ...request, query: 'limit=5' };
    const { out } = written(() => new ServiceLogger({ serviceName: 'flowgate' }).info('request', line));
    expect(JSON.parse(out)).toMatchObject({ level: 'INFO', message: 'request', service: 'flowgate', ...line });
  });

  it('text: one short line per request, at the local time, with the (redacted) query', () => {
    vi.useFakeTimers({ now: new Date(2026, 10, 27, 14, 6, 57), toFake: ['Date'] });
    const logger = text();
    logger.appendKeys({ requestId: 'r-1' });
    const { out, err } = written(() => {
      logger.info('request', request);
      logger.info('request', { ...request, query: 'api_key=[redacted]', status: 401, ms: 36 });
    });
    expect(out).toBe('14:06:57 GET /api/v1/executions 400 5 ms\n14:06:57 GET /api/v1/executions?api_key=[redacted] 401 36 ms\n');
    expect(err).toBe('');
  });

  it('text: other lines as time, message and key=value', () => {
    vi.useFakeTimers({ now: new Date(2026, 10, 27, 14, 7, 0), toFake: ['Date'] });
    const { out } = written(() => text().info('scheduled sweep', { expired: 1, recovered: 0, note: 'two words' }));
    expect(out).toBe('14:07:00 scheduled sweep expired=1 recovered=0 note="two words"\n');
  });

  it('text: warnings and errors in full on stderr, errors with their stack and cause', () => {
    vi.useFakeTimers({ now: new Date(2026, 10, 27, 14, 7, 1), toFake: ['Date'] });
    const logger = text();
    logger.appendKeys({ requestId: 'r-2' });
    const failure = new Error('boom', { cause: new Error('root cause') });
    const { out, err } = written(() => {
      logger.warn('delivery failed', { deliveryId: 'd-1', status: 500 });
      logger.error('handler crashed', failure);
    });
    expect(out).toBe('');
    expect(err).toContain("14:07:01 WARN delivery failed { requestId: 'r-2', deliveryId: 'd-1', status: 500 }\n");
    expect(err).toContain('14:07:01 ERROR handler crashed\n');
    expect(err).toContain('Error: boom\n');
    expect(err).toContain('log-format.test.ts');
    expect(err).toContain('[cause]: Error: root cause');
  });

  it('text: the level still filters', () => {
    const logger = new ServiceLogger({ serviceName: 'flowgate', logLevel: 'WARN', logFormatter: new TextLogFormatter() });
    expect(written(() => logger.info('request', request))).toEqual({ out: '', err: '' });
  });
});
