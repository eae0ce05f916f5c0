import { describe, expect, it } from 'vitest';
import { armedFrom } from '../../infra/local/scheduler.ts';
import {
  createScheduleInput,
  FIRE_WINDOW_MINUTES,
  fireOffsetMs,
  fireTimes,
  fireWindowMs,
  RETRY_WINDOW_MS,
} from '../../shared/schedules/clock.ts';

/** What each schedule asks EventBridge Scheduler for (the AWS clock sends exactly this to CreateSchedule and UpdateSchedule). */

const SETTINGS = {
  group: 'flowgate-prod-schedules',
  role: 'arn:aws:iam::123456789012:role/scheduler',
  target: 'arn:aws:lambda:eu-west-1:123456789012:function:fire',
  dlq: 'arn:aws:sqs:eu-west-1:123456789012:flowgate-prod-scheduler-dlq',
};
const timer = { accountId: 'acc_1', scheduleId: 'sch_01jabcdefghjkmnpqrstvwxyz0', timezone: 'Europe/Berlin', updatedAt: 1_700_000_000_000 };

describe('the CreateSchedule input', () => {
  it('names the schedule by its id in the group, reads it in its timezone, fires within a minute of its time into the fire function, with retries and the DLQ', () => {
    const input = createScheduleInput({ ...timer, expression: 'cron(0 9 * * ? *)' }, SETTINGS);
    expect(input).toEqual({
      Name: timer.scheduleId,
      GroupName: SETTINGS.group,
      ScheduleExpression: 'cron(0 9 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 1 },
      State: 'ENABLED',
      ActionAfterCompletion: 'NONE',
      Target: {
        Arn: SETTINGS.target,
        RoleArn: SETTINGS.role,
        Input: expect.any(String),
        RetryPolicy: { MaximumEventAgeInSeconds: RETRY_WINDOW_MS / 1000, MaximumRetryAttempts: 20 },
        DeadLetterConfig: { Arn: SETTINGS.dlq },
      },
      ClientToken: expect.any(String),
    });
    expect(JSON.parse(input.Target.Input)).toEqual({
      accountId: 'acc_1',
      scheduleId: timer.scheduleId,
      scheduledTime: '<aws.scheduler.scheduled-time>',
    });
  });

  it('deletes a one-time at() schedule after it fired, and passes the start and end dates', () => {
    const input = createScheduleInput(
      {
        ...timer,
        expression: 'at(2030-01-01T09:00:00)',
        startAt: Date.parse('2029-12-01T00:00:00Z'),
        endAt: Date.parse('2030-02-01T00:00:00Z'),
      },
      SETTINGS,
    );
    expect(input.ActionAfterCompletion).toBe('DELETE');
    // A one-time fire is on time: no window.
    expect(input.FlexibleTimeWindow).toEqual({ Mode: 'OFF' });
    expect(input).toMatchObject({ StartDate: new Date('2029-12-01T00:00:00Z'), EndDate: new Date('2030-02-01T00:00:00Z') });
  });

  it('sends one client token per version of the schedule, within the 64 characters the API allows', () => {
    const a = createScheduleInput({ ...timer, expression: 'rate(1 hour)' }, SETTINGS).ClientToken;
    expect(createScheduleInput({ ...timer, expression: 'rate(2 hours)' }, SETTINGS).ClientToken).toBe(a);
    expect(createScheduleInput({ ...timer, expression: 'rate(1 hour)', updatedAt: timer.updatedAt + 1 }, SETTINGS).ClientToken).not.toBe(a);
    expect(a.length).toBeLessThanOrEqual(64);
  });
});

describe("the fires' window: minute-aligned schedules spread over the minute", () => {
  const ids = Array.from({ length: 1000 }, (_, i) => `sch_01j${String(i).padStart(23, '0')}`);

  it('every cron and rate is sent with a one-minute flexible window; an at() with none', () => {
    expect(FIRE_WINDOW_MINUTES).toBe(1);
    for (const expression of ['cron(* * * * ? *)', 'rate(1 minute)', 'rate(2 hours)', 'cron(0 9 ? * MON-FRI *)']) {
      expect(createScheduleInput({ ...timer, expression }, SETTINGS).FlexibleTimeWindow, expression).toEqual({
        Mode: 'FLEXIBLE',
        MaximumWindowInMinutes: 1,
      });
      expect(fireWindowMs({ expression })).toBe(60_000);
    }
    expect(fireWindowMs({ expression: 'at(2030-01-01T09:00:00)' })).toBe(0);
  });

  it("locally each schedule's fires start at a fixed offset under the window, from its id; an at() at 0", () => {
    const every = ids.map((scheduleId) => fireOffsetMs({ scheduleId, expression: 'cron(* * * * ? *)' }));
    for (const o of every) {
      expect(Number.isInteger(o)).toBe(true);
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(60_000);
    }
    // The same id, the same offset, whatever its expression (a rate and a cron alike).
    expect(fireOffsetMs({ scheduleId: ids[7] as string, expression: 'rate(5 minutes)' })).toBe(every[7]);
    expect(fireOffsetMs({ scheduleId: ids[7] as string, expression: 'at(2030-01-01T09:00:00)' })).toBe(0);
  });

  it('1,000 schedules due at the same minute start spread over it: each tenth of the minute gets a tenth of them, give or take half', () => {
    const tenths = Array.from({ length: 10 }, () => 0);
    for (const scheduleId of ids) tenths[Math.floor(fireOffsetMs({ scheduleId, expression: 'rate(1 minute)' }) / 6000)]! += 1;
    for (const n of tenths) {
      expect(n).toBeGreaterThan(50);
      expect(n).toBeLessThan(150);
    }
    // Not the first second: at most a few dozen of 1,000 (on EventBridge all of them, before the window).
    expect(ids.filter((scheduleId) => fireOffsetMs({ scheduleId, expression: 'rate(1 minute)' }) < 1000).length).toBeLessThan(40);
  });
});

describe('a rate without startAt: first fire at creation, anchor kept across edits that keep the expression (as EventBridge)', () => {
  const created = Date.parse('2030-03-01T10:00:00.123Z');
  const HOUR = 3600_000;
  const rate = { ...timer, expression: 'rate(1 hour)', timezone: 'UTC', anchorAt: created, updatedAt: created };

  it('fires first at its creation, then every period', () => {
    // What the view shows (from just before now) and what the local scheduler arms for a timer just put.
    expect(fireTimes(rate, created - 1, 3)).toEqual([created, created + HOUR, created + 2 * HOUR]);
    expect(fireTimes(rate, armedFrom(rate, created + 40), 1)).toEqual([created]);
    // AWS: the anchor is the StartDate, its first occurrence, and it is due now.
    expect(createScheduleInput(rate, SETTINGS, created + 300).StartDate).toEqual(new Date(created));
  });

  it('a rename (a new version, the same expression) keeps the next fire time, locally and on AWS', () => {
    const renamed = { ...rate, updatedAt: created + 25 * 60_000 };
    const now = renamed.updatedAt + 20;
    expect(fireTimes(renamed, armedFrom(renamed, now), 2)).toEqual([created + HOUR, created + 2 * HOUR]);
    expect(fireTimes(renamed, now - 1, 1)).toEqual(fireTimes(rate, now - 1, 1));
    // The UpdateSchedule's StartDate is the next fire on the old grid (a StartDate long past would be refused, none would re-anchor).
    expect(createScheduleInput(renamed, SETTINGS, now).StartDate).toEqual(new Date(created + HOUR));
    // So is the sweep's re-creation days later.
    const later = created + 3 * 24 * HOUR + 5 * 60_000;
    expect(createScheduleInput(renamed, SETTINGS, later).StartDate).toEqual(new Date(created + 73 * HOUR));
  });

  it('a new expression re-anchors: its first fire is at the change', () => {
    const changedAt = created + 25 * 60_000;
    const changed = { ...rate, expression: 'rate(2 hours)', anchorAt: changedAt, updatedAt: changedAt };
    expect(fireTimes(changed, armedFrom(changed, changedAt + 30), 2)).toEqual([changedAt, changedAt + 2 * HOUR]);
    expect(createScheduleInput(changed, SETTINGS, changedAt + 30).StartDate).toEqual(new Date(changedAt));
  });

  it('a timer loaded at start replays no missed fire; an item without an anchor counts from its last change', () => {
    const now = created + 10 * HOUR + 30 * 60_000;
    expect(fireTimes(rate, armedFrom(rate, now), 1)).toEqual([created + 11 * HOUR]);
    const { anchorAt: _, ...legacy } = rate;
    expect(fireTimes(legacy, created - 1, 1)).toEqual([created]);
  });

  it('startAt is the anchor when given; a cron sends a past startAt no more (AWS refuses one over 5 minutes old)', () => {
    const startAt = created + 24 * HOUR;
    expect(createScheduleInput({ ...rate, startAt }, SETTINGS, created).StartDate).toEqual(new Date(startAt));
    expect(fireTimes({ ...rate, startAt }, created, 1)).toEqual([startAt]);
    const cron = { ...timer, expression: 'cron(0 9 * * ? *)', startAt: created };
    expect(createScheduleInput(cron, SETTINGS, created - HOUR).StartDate).toEqual(new Date(created));
    expect(createScheduleInput(cron, SETTINGS, created + HOUR).StartDate).toBeUndefined();
  });
});
