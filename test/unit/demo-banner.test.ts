import { describe, expect, it } from 'vitest';
import { demoBanner } from '../../infra/local/seed.ts';

const demo = {
  baseUrl: 'http://127.0.0.1:3000',
  accountId: 'acc_01',
  adminEmail: 'admin@demo.local',
  adminPassword: 'pw',
  apiKey: 'key',
  workflowId: 'wf_01',
  webhookId: 'wh_01',
};

describe("npm start's banner", () => {
  it('lists the demo workflow as having no schedules, with how to add a one-minute one', () => {
    const banner = demoBanner(demo);
    expect(banner).toContain('Schedules of the demo workflow: none');
    expect(banner).toContain(`-X POST ${demo.baseUrl}/api/workflows/wf_01/schedules`);
    expect(banner).toContain('"expression":"rate(1 minute)"');
  });

  it('lists each schedule with its expression, timezone and next fire time, or that it is disabled', () => {
    const banner = demoBanner(demo, [
      {
        id: 'sch_a',
        name: 'nightly',
        expression: 'cron(0 2 * * ? *)',
        timezone: 'Europe/Berlin',
        enabled: true,
        nextFireTimes: ['2026-11-27T02:00:00+01:00'],
      },
      { id: 'sch_b', name: 'once', expression: 'at(2026-12-01T09:00:00)', timezone: 'UTC', enabled: false, nextFireTimes: [] },
    ]);
    expect(banner).toContain('Schedules of the demo workflow: 2');
    expect(banner).toContain('sch_a  cron(0 2 * * ? *) (Europe/Berlin)  next: 2026-11-27T02:00:00+01:00  nightly');
    expect(banner).toContain('sch_b  at(2026-12-01T09:00:00) (UTC)  disabled  once');
  });
});
