import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Invocation } from '../../infra/local/lambda.ts';
import { startLocalScheduler } from '../../infra/local/scheduler.ts';
import { createSchedule, updateSchedule } from '../../shared/domain/schedules.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { createScheduleInput, type FireEvent, fireOffsetMs } from '../../shared/schedules/clock.ts';
import { CreateScheduleBody, UpdateScheduleBody } from '../../shared/schemas/schedules.ts';
import { eventually, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';

/**
 * Minute-aligned schedules are spread over the minute (issue 42, item 1; docs/schedules.md "Fires,
 * overlap and limits"): the schedule sent to EventBridge has a one-minute flexible window, and the
 * local scheduler (infra/local/scheduler.ts) honours the same window: each schedule's fires start at
 * its own offset in it (`fireOffsetMs`), the event carrying the time they were due. Real schedules
 * through the schedules domain, fired by the local scheduler on a table of this file's own.
 */

beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues();
});

type Try = { fire: FireEvent; outcome: Invocation<unknown>; at: number };
const tries: Try[] = [];
let scheduler: Awaited<ReturnType<typeof startLocalScheduler>>;
beforeAll(async () => {
  scheduler = await startLocalScheduler({ onAttempt: (fire, _attempt, outcome) => void tries.push({ fire, outcome, at: Date.now() }) });
});
afterAll(() => scheduler?.stop());

const SETTINGS = {
  group: 'flowgate-test-schedules',
  role: 'arn:aws:iam::123456789012:role/scheduler',
  target: 'arn:aws:lambda:eu-west-1:123456789012:function:fire',
  dlq: 'arn:aws:sqs:eu-west-1:123456789012:flowgate-test-scheduler-dlq',
};
const EVERY_MINUTE = 'rate(1 minute)';

describe('two schedules due at the same moment', () => {
  it('fire each at its own offset within the minute, not together; the fire says when it was due; AWS gets the one-minute window', async () => {
    const a = await givenAccount({ plan: 'enterprise' });
    const p = adminSession(a);
    const workflow = await createWorkflow(p, {
      name: 'spread',
      definition: WorkflowDefinition.parse({ steps: [{ id: 's', type: 'set', values: { x: 1 } }] }),
      recovery: false,
      editors: [],
    });
    // Disabled schedules (no timer yet) until one starts early in the window and one some seconds later.
    let early: string | undefined;
    let later: string | undefined;
    for (let i = 0; i < 400 && !(early && later); i++) {
      const s = await createSchedule(p, workflow.workflowId, CreateScheduleBody.parse({ expression: EVERY_MINUTE, enabled: false }));
      const offset = fireOffsetMs(s);
      if (!early && offset < 2000) early = s.scheduleId;
      else if (!later && offset >= 4000 && offset < 8000) later = s.scheduleId;
    }
    expect(early && later).toBeTruthy();
    // Both due at the same whole second, 3 s from now (a rate starts at its startAt).
    const due = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    const startAt = new Date(due).toISOString();
    const enabled = [];
    for (const id of [early, later] as string[])
      enabled.push(await updateSchedule(p, id, UpdateScheduleBody.parse({ enabled: true, startAt })));
    // What EventBridge would be sent for them: the one-minute window.
    for (const s of enabled)
      expect(createScheduleInput(s, SETTINGS).FlexibleTimeWindow).toEqual({ Mode: 'FLEXIBLE', MaximumWindowInMinutes: 1 });

    const first = (id: string) => tries.find((t) => t.fire.scheduleId === id);
    const e = await eventually(
      async () => first(early as string),
      (t) => t !== undefined,
    );
    const [earlyOffset, laterOffset] = [fireOffsetMs(enabled[0]!), fireOffsetMs(enabled[1]!)];
    expect(e?.fire.scheduledTime).toBe(startAt);
    expect(e?.outcome.status).toBe('ok');
    expect(e!.at - due).toBeGreaterThanOrEqual(earlyOffset);
    // The later one has not started while the early one ran: its offset is seconds on.
    expect(first(later as string)).toBeUndefined();
    const l = await eventually(
      async () => first(later as string),
      (t) => t !== undefined,
      15_000,
    );
    expect(l?.fire.scheduledTime).toBe(startAt);
    expect(l!.at - due).toBeGreaterThanOrEqual(laterOffset);
    expect(l!.at - e!.at).toBeGreaterThan(laterOffset - earlyOffset - 1000);
  }, 60_000);
});
