import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as trigger } from '../../functions/http/webhooks/trigger.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { APP_METRICS } from '../../shared/metric-names.ts';
import { resetMetrics } from '../../shared/metrics.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { runBatch } from '../bench/drive.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';

// The application's metrics are EMF lines on stdout, in the namespace and dimensions the dashboard reads.
beforeAll(async () => {
  // Runs through the worker (a batch of 3): the `set` workflows here would otherwise finish in their trigger.
  await useOwnQueues({ POWERTOOLS_METRICS_DISABLED: 'false', INLINE_RUNS: 'off' });
  resetMetrics();
});
afterAll(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  resetMetrics();
});

type Emf = {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
} & Record<string, unknown>;

describe('application metrics', () => {
  it('publishes TriggerAccepted, OpenWebhookTriggered, ExecutionStarted and TriggerRejected (by code) as EMF in the Flowgate namespace', async () => {
    const { account, admin } = await givenAccount();
    const principal = { kind: 'session', accountId: account.accountId, userId: admin.userId, role: 'admin', sessionId: 'x' } as const;
    const workflow = await createWorkflow(principal, {
      name: 'm',
      definition: WorkflowDefinition.parse({ steps: [{ id: 'a', type: 'set', values: {} }] }),
      recovery: false,
      editors: [],
    });
    const webhook = await createWebhook(
      principal,
      CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'open', authMode: 'open' }),
    );
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const path = `/api/webhooks/${webhook.webhookId}/trigger`;
      const ok = await invoke(trigger, apiEvent({ method: 'POST', path, params: { webhookId: webhook.webhookId }, body: { a: 1 } }));
      const bad = await invoke(
        trigger,
        apiEvent({
          method: 'POST',
          path,
          params: { webhookId: webhook.webhookId },
          body: '[1]',
          headers: { 'content-type': 'application/json' },
        }),
      );
      expect([ok.status, bad.status]).toEqual([200, 400]);
    } finally {
      spy.mockRestore();
    }
    const emf = lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.includes('"_aws"'))
      .map((l) => JSON.parse(l) as Emf);
    const named = (name: string) => emf.filter((e) => e._aws.CloudWatchMetrics[0]?.Metrics.some((m) => m.Name === name));
    for (const e of emf) {
      const [directive] = e._aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe('Flowgate');
      expect(e.service).toBe('flowgate');
      for (const m of directive?.Metrics ?? []) {
        expect(Object.keys(APP_METRICS)).toContain(m.Name);
        expect(m.Unit).toBe(APP_METRICS[m.Name as keyof typeof APP_METRICS].unit);
        // Exactly the dimensions the dashboard reads: service, plus the metric's own.
        expect(directive?.Dimensions).toEqual([['service', ...APP_METRICS[m.Name as keyof typeof APP_METRICS].dimensions]]);
      }
    }
    expect(named('TriggerAccepted')).toHaveLength(1);
    // The webhook is open: the dashboard counts what such webhooks accept.
    expect(named('OpenWebhookTriggered')).toHaveLength(1);
    expect(named('ExecutionStarted')).toHaveLength(1);
    const rejected = named('TriggerRejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.code).toBe('BODY_NOT_OBJECT');
  });

  it('a request publishes its metrics without dimensions on one line; a worker batch of 3 runs too, each value kept', async () => {
    const { account, admin } = await givenAccount();
    const principal = { kind: 'session', accountId: account.accountId, userId: admin.userId, role: 'admin', sessionId: 'x' } as const;
    const workflow = await createWorkflow(principal, {
      name: 'm3',
      definition: WorkflowDefinition.parse({ steps: [{ id: 'a', type: 'set', values: { x: 1 } }] }),
      recovery: false,
      editors: [],
    });
    const webhook = await createWebhook(
      principal,
      CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'open3', authMode: 'open' }),
    );
    const path = `/api/webhooks/${webhook.webhookId}/trigger`;
    const emfOf = async (fn: () => Promise<unknown>) => {
      const lines: string[] = [];
      const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
        lines.push(String(chunk));
        return true;
      });
      try {
        await fn();
      } finally {
        spy.mockRestore();
      }
      return lines
        .flatMap((l) => l.split('\n'))
        .filter((l) => l.includes('"_aws"'))
        .map((l) => JSON.parse(l) as Emf);
    };
    const names = (e: Emf) => e._aws.CloudWatchMetrics[0]?.Metrics.map((m) => m.Name).sort();
    const ids: string[] = [];
    const triggered = await emfOf(async () => {
      for (let i = 0; i < 3; i++) {
        const res = await invoke(trigger, apiEvent({ method: 'POST', path, params: { webhookId: webhook.webhookId }, body: { a: i } }));
        expect(res.status).toBe(200);
        ids.push(res.json.executionId);
      }
    });
    // One line per request, with the request's three metrics on it.
    expect(triggered.map(names)).toEqual(Array(3).fill(['ExecutionStarted', 'OpenWebhookTriggered', 'TriggerAccepted']));
    const messages = (await takeRunMessages()).filter((m) => ids.includes(m.executionId));
    expect(messages).toHaveLength(3);
    const worked = await emfOf(() => runBatch(messages, 'metrics'));
    expect(worked).toHaveLength(1);
    expect(names(worked[0] as Emf)).toEqual(['ExecutionSucceeded', 'StepDuration']);
    expect(worked[0]?.ExecutionSucceeded).toEqual([1, 1, 1]);
    expect(worked[0]?.StepDuration).toHaveLength(3);
  });
});
