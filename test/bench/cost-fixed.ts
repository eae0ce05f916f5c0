import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { FlowgateStack } from '../../infra/stack.ts';
import type { FlowgateStackProps } from '../../infra/settings.ts';
import { APP_METRICS } from '../../shared/metric-names.ts';
import { allResources, templatesOf } from '../support/template.ts';
import { type Fixed, MONTH_MS } from './cost-model.ts';

// What the cost bench reads from the stage's synthesized template (`npm run bench -- cost`): what bills
// a month whatever the stage runs, the access log's line, the log groups' retention.

type Resource = { Type: string; Properties: Record<string, any> };

/** Every resource of the stack and its nested stacks by logical id, as `cdk synth` builds them with `props` (no bundling). */
export function synthesized(props: Partial<FlowgateStackProps> = {}): Record<string, Resource> {
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const built = templatesOf(new FlowgateStack(app, 'flowgate-cost', { stage: 'cost', ...props }));
  return { ...allResources(built), ...(built.auditEvents.toJSON().Resources as Record<string, Resource>) };
}

/**
 * Lambda's pollers of an SQS event source mapping while the queue is empty: AWS starts five, each a
 * 20-second long poll after another, so 15 ReceiveMessage requests a minute per mapping.
 */
export const IDLE_POLLERS = 5;
const LONG_POLL_SECONDS = 20;
/**
 * `TriggerRejected` is one metric per problem code a trigger is refused with; the codes seen in a
 * month are not in the template. Counted as this many (the trigger's usual refusals: not found,
 * disabled, bad JSON, unauthorized, forbidden address, rate-limited, too large, auth failures limited).
 */
export const TRIGGER_REJECT_CODES = 8;

/** Invocations a month of a `rate(...)` schedule expression (a `cron(...)` is refused: none in the stack). */
export function invocationsPerMonth(expression: string): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!m) throw new Error(`schedule ${expression}: the cost model reads rate() expressions only`);
  const unitMs = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }[m[2]?.replace(/s$/, '') as 'minute' | 'hour' | 'day'];
  return MONTH_MS / (Number(m[1]) * unitMs);
}

const logicalIdOf = (ref: unknown) => (ref as { 'Fn::GetAtt'?: [string, string] })?.['Fn::GetAtt']?.[0];

/** What bills monthly in the template, each scheduled rule's invocation priced by `scheduleInvocation` (its target's function logical id → dollars). */
export function fixedOfTemplate(byId: Record<string, Resource>, scheduleInvocation: (target: string) => number): Fixed {
  const resources = Object.values(byId);
  const of = (type: string) => resources.filter((r) => r.Type === type);
  let alarmMetrics = 0;
  let highResolutionAlarmMetrics = 0;
  for (const a of of('AWS::CloudWatch::Alarm')) {
    const metrics: Record<string, any>[] = a.Properties.Metrics?.filter((m: Record<string, any>) => m.MetricStat) ?? [a.Properties];
    for (const m of metrics) {
      const period = m.MetricStat?.Period ?? m.Period ?? 60;
      if (period < 60) highResolutionAlarmMetrics++;
      else alarmMetrics++;
    }
  }
  const schedules = of('AWS::Events::Rule')
    .filter((r) => r.Properties.ScheduleExpression && r.Properties.State !== 'DISABLED')
    .map((r) => {
      const target = logicalIdOf(r.Properties.Targets?.[0]?.Arn) as string;
      return {
        name: `${r.Properties.Description ?? target}: ${r.Properties.ScheduleExpression}`,
        perMonth: invocationsPerMonth(r.Properties.ScheduleExpression),
        dollarsEach: scheduleInvocation(target),
      };
    });
  const sqsMappings = of('AWS::Lambda::EventSourceMapping').filter(
    (m) => byId[logicalIdOf(m.Properties.EventSourceArn) ?? '']?.Type === 'AWS::SQS::Queue',
  );
  const customMetrics = Object.values(APP_METRICS).reduce((n, m) => n + (m.dimensions.length ? TRIGGER_REJECT_CODES : 1), 0);
  return {
    dashboards: of('AWS::CloudWatch::Dashboard').length,
    alarmMetrics,
    highResolutionAlarmMetrics,
    compositeAlarms: of('AWS::CloudWatch::CompositeAlarm').length,
    customMetrics,
    secrets: of('AWS::SecretsManager::Secret').length,
    kmsKeys: of('AWS::KMS::Key').length,
    schedules,
    idlePolls: sqsMappings.length * IDLE_POLLERS * (60 / LONG_POLL_SECONDS) * (MONTH_MS / 60_000),
  };
}

/**
 * The HTTP API's access log line for one request: the stage's format (as the template has it) with
 * each `$context` variable as a trigger request fills it.
 */
export function accessLogLine(byId: Record<string, Resource>, context: Record<string, string>): string {
  const stage = Object.values(byId).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage');
  const format = stage?.Properties.AccessLogSettings?.Format;
  if (typeof format !== 'string') throw new Error('the stage has no access log format');
  return format.replace(/\$context\.[\w.]+/g, (v) => {
    const value = context[v.slice('$context.'.length)];
    if (value === undefined) throw new Error(`no sample value for ${v}`);
    return value;
  });
}

/** The retention (days) of the log groups: one figure for all of them, else an error (the model keeps one). */
export function logRetentionDays(byId: Record<string, Resource>): number {
  const days = new Set(
    Object.values(byId)
      .filter((r) => r.Type === 'AWS::Logs::LogGroup')
      .map((r) => r.Properties.RetentionInDays),
  );
  if (days.size !== 1) throw new Error(`log groups keep ${[...days].join(', ')} days: the cost model assumes one retention`);
  return [...days][0] as number;
}
