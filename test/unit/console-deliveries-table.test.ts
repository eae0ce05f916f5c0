import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import type { ConsoleSession } from '../../shared/console/auth.ts';
import { DELIVERY_COLUMNS as c, type Delivery, DeliveriesTable } from '../../shared/console/deliveries-table.tsx';

/**
 * The one table of deliveries (shared/console/deliveries-table.tsx), as the run page and a channel's
 * page use it: the columns each names, "Redeliver" for admins only and never while a delivery is being
 * sent, and a provider's or a run's text escaped.
 */
const session = (role: 'admin' | 'member'): ConsoleSession => ({
  principal: { kind: 'session', accountId: 'acc_1', userId: 'usr_1', role, sessionId: 'ses_1' },
  email: 'a@example.com',
  accountName: 'Acme',
  csrf: 'csrf-token-1',
});

const HOSTILE = '<script>alert(1)</script>';
const delivery = (over: Partial<Delivery>): Delivery => ({
  deliveryId: 'dlv_1',
  executionId: 'exe_1',
  approvalId: null,
  kind: 'approval',
  channel: 'slack',
  target: `ops:#${HOSTILE}`,
  state: 'FAILED',
  attempts: [{ at: 1_764_700_000_000, durationMs: 1200, error: `refused ${HOSTILE}` }],
  nextRetryAt: null,
  createdAt: 1_764_700_000_000,
  updatedAt: 1_764_700_000_000,
  ...over,
});

const render = (role: 'admin' | 'member', columns: Parameters<typeof DeliveriesTable>[0]['columns'], items: Delivery[]) =>
  renderToString(
    DeliveriesTable({
      caption: 'Messages',
      items,
      columns,
      session: session(role),
      redeliverPath: (d) => `/console/x/${d.deliveryId}/redeliver`,
    }),
  );
const headers = (html: string) => [...html.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((m) => m[1]);

describe('the deliveries table', () => {
  it("shows the run page's columns, and an admin's Redeliver posting the CSRF token to the delivery's path", () => {
    const html = render(
      'admin',
      [c.kind, c.channel, c.target, c.stateAndNextTry, c.lastAttempt],
      [delivery({ nextRetryAt: 1_764_700_060_000 })],
    );
    expect(headers(html)).toEqual(['Kind', 'Channel', 'Target', 'State', 'Attempts', 'Action']);
    expect(html).toContain('<form method="post" action="/console/x/dlv_1/redeliver" class="inline">');
    expect(html).toMatch(/<input type="hidden" name="csrf" value="csrf-token-1"\s*\/?>/);
    expect(html).toContain('aria-label="Redeliver approval to ops:#&lt;script>alert(1)&lt;/script>"');
    expect(html).toContain('next try');
    expect(html).toMatch(/1 · last .*: refused &lt;script>alert\(1\)&lt;\/script> in 1 s/);
    expect(html).not.toContain('<script>');
  });

  it("shows a channel page's columns (its own To column beside the shared ones), the last error under the status", () => {
    const to = { header: 'To', cell: (d: Delivery) => d.target.slice('ops'.length + 2) };
    const html = render('admin', [c.sent, to, c.kind, c.stateAndError, c.attemptCount, c.run], [delivery({})]);
    expect(headers(html)).toEqual(['Sent', 'To', 'Kind', 'Status', 'Attempts', 'Run', 'Action']);
    expect(html).toContain('<div class="muted">refused &lt;script>alert(1)&lt;/script></div>');
    expect(html).toContain('href="/console/runs/exe_1"');
    expect(html).not.toContain('<script>');
  });

  it('offers no Redeliver while a delivery is being sent, and none to a member', () => {
    const pending = render('admin', [c.kind], [delivery({ state: 'PENDING', attempts: [] })]);
    expect(pending).toContain('<span class="muted">sending</span>');
    expect(pending).not.toContain('<form');
    const member = render('member', [c.kind, c.lastAttempt], [delivery({})]);
    expect(headers(member)).toEqual(['Kind', 'Attempts']);
    expect(member).not.toContain('<form');
  });
});
