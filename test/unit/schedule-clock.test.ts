import { describe, expect, it } from 'vitest';
import { createScheduleInput, RETRY_WINDOW_MS } from '../../shared/schedules/clock.ts';

/** What each schedule asks EventBridge Scheduler for (the AWS clock sends exactly this to CreateSchedule and UpdateSchedule). */

const SETTINGS = {
  group: 'flowgate-prod-schedules',
  role: 'arn:aws:iam::123456789012:role/scheduler',
  target: 'arn:aws:lambda:eu-west-1:123456789012:function:fire',
  dlq: 'arn:aws:sqs:eu-west-1:123456789012:flowgate-prod-scheduler-dlq',
};
const timer = { accountId: 'acc_1', scheduleId: 'sch_01jabcdefghjkmnpqrstvwxyz0', timezone: 'Europe/Berlin', updatedAt: 1_700_000_000_000 };

describe('the CreateSchedule input', () => {
  it('names the schedule by its id in the group, reads it in its timezone, fires exactly on time into the fire function, with retries and the DLQ', () => {
    const input = createScheduleInput({ ...timer, expression: 'cron(0 9 * * ? *)' }, SETTINGS);
    expect(input).toEqual({
      Name: timer.scheduleId,
      GroupName: SETTINGS.group,
      ScheduleExpression: 'cron(0 9 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'OFF' },
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
    expect(input).toMatchObject({ StartDate: new Date('2029-12-01T00:00:00Z'), EndDate: new Date('2030-02-01T00:00:00Z') });
  });

  it('sends one client token per version of the schedule, within the 64 characters the API allows', () => {
    const a = createScheduleInput({ ...timer, expression: 'rate(1 hour)' }, SETTINGS).ClientToken;
    expect(createScheduleInput({ ...timer, expression: 'rate(2 hours)' }, SETTINGS).ClientToken).toBe(a);
    expect(createScheduleInput({ ...timer, expression: 'rate(1 hour)', updatedAt: timer.updatedAt + 1 }, SETTINGS).ClientToken).not.toBe(a);
    expect(a.length).toBeLessThanOrEqual(64);
  });
});
