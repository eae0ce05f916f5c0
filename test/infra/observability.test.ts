import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { ALARMS, EDGE_THROTTLE_PATTERN } from '../../infra/constructs/alarms.ts';
import { TABLE } from '../../shared/db/table.ts';
import { APP_METRICS, METRICS_NAMESPACE } from '../../infra/constructs/observability.ts';
import type { FlowgateStackProps } from '../../infra/settings.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { ownFunctions, templatesOf } from '../support/template.ts';

type Resource = { Type: string; Properties: Record<string, any> };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const STACK = 'flowgate-obs';
const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';

function build(props: Partial<FlowgateStackProps> = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  return templatesOf(new FlowgateStack(app, STACK, { stage: 'obs', ...props }));
}
const synth = (props: Partial<FlowgateStackProps> = {}) => build(props).template;

const { template, functions } = build();
const withEmail = synth({ alarmEmail: 'ops@example.com' });
const withTopicArn = synth({ alarmTopicArn: TOPIC_ARN });

const all = (t: Template, type: string) => Object.entries(t.findResources(type) as Record<string, Resource>);
const logicalId = (t: Template, type: string, match: (r: Resource) => boolean) => {
  const found = all(t, type).filter(([, r]) => match(r));
  expect(found).toHaveLength(1);
  return found[0]![0];
};
const queueId = (t: Template, name: string) => logicalId(t, 'AWS::SQS::Queue', (q) => q.Properties.QueueName === `${STACK}-${name}`);
const functionId = (t: Template, handler: string) =>
  logicalId(t, 'AWS::IAM::Role', (r) => r.Properties.Description === `Flowgate function ${handler}`);
/** The dashboard body with every token written as its JSON, so references can be searched for. */
function dashboardBody(t: Template): string {
  const [[, dashboard] = []] = all(t, 'AWS::CloudWatch::Dashboard');
  const body = dashboard!.Properties.DashboardBody;
  return typeof body === 'string'
    ? body
    : (body['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('');
}
const alarm = (t: Template, key: keyof typeof ALARMS) => {
  const found = all(t, 'AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.AlarmName === `${STACK}-${ALARMS[key]}`);
  expect(found, `alarm ${key}`).toHaveLength(1);
  return found[0]![1].Properties;
};

describe('dashboard', () => {
  const body = dashboardBody(template);

  it('is one dashboard, named after the stack', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: { 'Fn::Join': ['', [`${STACK}-`, { Ref: 'AWS::Region' }]] },
    });
    template.hasOutput('DashboardUrl', Match.anyValue());
  });

  it('names each queue and dead-letter queue', () => {
    for (const name of ['runs', 'runs-dlq', 'heavy-runs', 'heavy-runs-dlq', 'notifications', 'notifications-dlq']) {
      expect(body).toContain(JSON.stringify({ 'Fn::GetAtt': [queueId(template, name), 'QueueName'] }));
    }
    expect(body).toContain('ApproximateNumberOfMessagesVisible');
    expect(body).toContain('ApproximateAgeOfOldestMessage');
  });

  it('shows the HTTP API latency percentiles, 4xx and 5xx', () => {
    const [apiId] = all(template, 'AWS::ApiGatewayV2::Api')[0]!;
    expect(body).toContain(JSON.stringify({ Ref: apiId }));
    for (const s of ['"Latency"', '"p50"', '"p99"', '"4xx"', '"5xx"', '"Count"']) expect(body).toContain(s);
  });

  it('has one line per function group: every route tag, the two workers and the fallback', () => {
    const groups = [...new Set(routes.map((r) => r.tag)), 'Runs worker', 'Notifications worker', 'Fallback'];
    for (const metric of ['Errors', 'Throttles', 'Duration']) expect(body).toContain(`"AWS/Lambda","${metric}"`);
    for (const g of groups) expect(body).toContain(`"label":"${g}"`);
    // Every function of the stack is in some group.
    for (const [fnId] of ownFunctions(template)) expect(body).toContain(JSON.stringify({ Ref: fnId }));
    // A route's function is named by an output of the route functions' stack.
    const outputs = Object.entries(functions.toJSON().Outputs as Record<string, { Value: unknown }>);
    for (const [fnId] of ownFunctions(functions)) {
      const [output] = outputs.find(([, o]) => JSON.stringify(o.Value) === JSON.stringify({ Ref: fnId }))!;
      expect(body).toContain(`"Outputs.${output}"]}`);
    }
  });

  it("shows each alarm's metric and threshold in a widget of its own", () => {
    for (const [id, a] of all(template, 'AWS::CloudWatch::Alarm')) {
      expect(body, a.Properties.AlarmName).toContain(`"annotations":{"alarms":["${JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] })}"]}`);
      expect(body).toContain(`"title":"${a.Properties.AlarmName.slice(`${STACK}-`.length)}"`);
    }
  });

  it('graphs every custom metric of the Flowgate namespace with service=flowgate', () => {
    for (const name of Object.keys(APP_METRICS)) {
      const plain = body.includes(`"${METRICS_NAMESPACE}","${name}","service","flowgate"`);
      const searched = body.includes(`MetricName=\\"${name}\\"`);
      expect(plain || searched, name).toBe(true);
    }
    expect(body).toContain('{Flowgate,code,service}');
  });

  it('gives every function the namespace and service Powertools Metrics publish under', () => {
    for (const [, fn] of [...ownFunctions(template), ...ownFunctions(functions)]) {
      expect(fn.Properties.Environment.Variables).toMatchObject({
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_SERVICE_NAME: 'flowgate',
      });
    }
  });
});

describe('alarms', () => {
  const keys = Object.keys(ALARMS) as (keyof typeof ALARMS)[];

  it('exist, each treating missing data as OK (but the sweep-not-running one), and notify nobody without a topic', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', keys.length);
    template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const key of keys) {
      const a = alarm(template, key);
      expect(a.TreatMissingData).toBe(key === 'sweepNotRunning' ? 'breaching' : 'notBreaching');
      expect(a.AlarmActions).toBeUndefined();
      expect(a.OKActions).toBeUndefined();
      expect(a.AlarmDescription).toEqual(expect.any(String));
    }
  });

  it('send to a new topic with the email subscribed when alarmEmail is set', () => {
    const [topicId] = all(withEmail, 'AWS::SNS::Topic')[0]!;
    withEmail.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topicId },
    });
    withEmail.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    for (const key of keys) {
      const a = alarm(withEmail, key);
      expect(a.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(a.OKActions).toEqual([{ Ref: topicId }]);
    }
    withEmail.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
  });

  it('send to an existing topic when alarmTopicArn is set, creating none', () => {
    withTopicArn.resourceCountIs('AWS::SNS::Topic', 0);
    withTopicArn.resourceCountIs('AWS::SNS::Subscription', 0);
    for (const key of keys) {
      const a = alarm(withTopicArn, key);
      expect(a.AlarmActions).toEqual([TOPIC_ARN]);
      expect(a.OKActions).toEqual([TOPIC_ARN]);
    }
  });

  it('fires on any message in a dead-letter queue of the workers', () => {
    for (const [key, queue] of [
      ['runsDlq', 'runs-dlq'],
      ['heavyRunsDlq', 'heavy-runs-dlq'],
      ['notificationsDlq', 'notifications-dlq'],
    ] as const) {
      const a = alarm(template, key);
      expect(a).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
      });
      expect(a.Dimensions).toEqual([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId(template, queue), 'QueueName'] } }]);
    }
  });

  it('fires on any delivery of the delivery log that failed for good, from the metric the notifications worker publishes', () => {
    const a = alarm(template, 'deliveryFailures');
    // A labelled metric is written in the Metrics form.
    expect(a.Metrics).toEqual([
      expect.objectContaining({
        MetricStat: {
          Metric: { Namespace: METRICS_NAMESPACE, MetricName: 'DeliveryFailed', Dimensions: [{ Name: 'service', Value: 'flowgate' }] },
          Period: 300,
          Stat: 'Sum',
        },
      }),
    ]);
    expect(a).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
    });
    expect(APP_METRICS.DeliveryFailed).toEqual({ unit: 'Count', dimensions: [] });
  });

  it('fires on a 5xx rate above 1% over 5 minutes, computed with metric math and a minimum request count', () => {
    const a = alarm(template, 'api5xxRate');
    expect(a).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
    const metrics = a.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string }; Period: number } }[];
    const expression = metrics.find((m) => m.Expression)?.Expression;
    expect(expression).toMatch(/^IF\(requests >= \d+, 100 \* FILL\(errors, 0\) \/ requests, 0\)$/);
    expect(Number(expression?.match(/>= (\d+)/)?.[1])).toBeGreaterThanOrEqual(50);
    const stat = Object.fromEntries(metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat!]));
    expect(stat.requests).toMatchObject({ Metric: { MetricName: 'Count' }, Period: 300, Stat: 'Sum' });
    expect(stat.errors).toMatchObject({ Metric: { MetricName: '5xx' }, Period: 300, Stat: 'Sum' });
  });

  it('fires on runs worker errors in 3 of 5 minutes', () => {
    expect(alarm(template, 'runsWorkerErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: expect.any(String) } }],
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    const worker = alarm(template, 'runsWorkerErrors').Dimensions[0].Value.Ref as string;
    const fn = template.toJSON().Resources[worker] as Resource;
    expect(fn.Properties.Role['Fn::GetAtt'][0]).toBe(functionId(template, 'worker/execute'));
  });

  it('fires when the oldest message on either runs queue (the main lane, the heavy lane) is older than 5 minutes', () => {
    for (const [key, queue] of [
      ['runsQueueAge', 'runs'],
      ['heavyRunsQueueAge', 'heavy-runs'],
    ] as const) {
      expect(alarm(template, key)).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId(template, queue), 'QueueName'] } }],
        Threshold: 300,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    }
  });

  it('leaves no queue a worker consumes unalarmed: each has a dead-letter queue, an age alarm, and its DLQ an alarm', () => {
    const alarmed = (metric: string) =>
      all(template, 'AWS::CloudWatch::Alarm')
        .filter(([, a]) => a.Properties.MetricName === metric)
        .map(([, a]) => a.Properties.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0]);
    const consumed = all(template, 'AWS::Lambda::EventSourceMapping').map(
      ([, m]) => m.Properties.EventSourceArn['Fn::GetAtt'][0] as string,
    );
    // The runs queue's two lanes and the notifications queue.
    expect(consumed.sort()).toEqual(
      [queueId(template, 'runs'), queueId(template, 'heavy-runs'), queueId(template, 'notifications')].sort(),
    );
    const queues = template.toJSON().Resources as Record<string, Resource>;
    for (const id of consumed) {
      const dlq = queues[id]?.Properties.RedrivePolicy?.deadLetterTargetArn?.['Fn::GetAtt']?.[0];
      expect(dlq, id).toEqual(expect.any(String));
      expect(alarmed('ApproximateAgeOfOldestMessage'), id).toContain(id);
      expect(alarmed('ApproximateNumberOfMessagesVisible'), dlq).toContain(dlq);
    }
  });
});

describe('alarms for the silent failures', () => {
  const functionRef = (key: keyof typeof ALARMS) => {
    const a = alarm(template, key);
    const fn = template.toJSON().Resources[a.Dimensions[0].Value.Ref] as Resource;
    return fn.Properties.Role['Fn::GetAtt'][0];
  };

  it('fire on notifications worker errors in 3 of 5 minutes', () => {
    expect(alarm(template, 'notifyWorkerErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(functionRef('notifyWorkerErrors')).toBe(functionId(template, 'worker/notify'));
  });

  it('fire when the oldest message on the notifications queue is older than 15 minutes', () => {
    expect(alarm(template, 'notificationsQueueAge')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId(template, 'notifications'), 'QueueName'] } }],
      Threshold: 900,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('fire when the scheduled sweep fails in 3 of 5 minutes', () => {
    expect(alarm(template, 'sweepErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      Threshold: 0,
    });
    expect(functionRef('sweepErrors')).toBe(functionId(template, 'sweep/scheduled'));
  });

  it('fire when the scheduled sweep has not run for 10 minutes, no data counting as not running', () => {
    expect(alarm(template, 'sweepNotRunning')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 2,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    expect(functionRef('sweepNotRunning')).toBe(functionId(template, 'sweep/scheduled'));
  });

  it("fire on the account's Lambda throttles in 2 of 3 five-minute periods", () => {
    const a = alarm(template, 'lambdaThrottles');
    expect(a).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    // No dimension: every function of the account in the region.
    expect(a.Metrics).toEqual([
      expect.objectContaining({ MetricStat: { Metric: { Namespace: 'AWS/Lambda', MetricName: 'Throttles' }, Period: 300, Stat: 'Sum' } }),
    ]);
  });

  it('fire on DynamoDB throttled requests and system errors, summed over the operations the code issues', () => {
    const [tableId] = all(template, 'AWS::DynamoDB::Table')[0]!;
    for (const [key, metric] of [
      ['dynamoThrottles', 'ThrottledRequests'],
      ['dynamoSystemErrors', 'SystemErrors'],
    ] as const) {
      const a = alarm(template, key);
      expect(a).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 3, DatapointsToAlarm: 2 });
      type Query = { Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string; Value: unknown }[] } } };
      const metrics = a.Metrics as Query[];
      const stats = metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat!.Metric);
      // At most 10 metrics in one alarm; each operation of the code, on this table.
      expect(stats.length).toBeLessThanOrEqual(10);
      const operations = stats.map((m) => m.Dimensions.find((d) => d.Name === 'Operation')?.Value);
      expect(operations).toEqual(expect.arrayContaining(['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems']));
      for (const m of stats) {
        expect(m.MetricName).toBe(metric);
        expect(m.Dimensions).toContainEqual({ Name: 'TableName', Value: { Ref: tableId } });
      }
      expect(metrics.find((m) => m.Expression)?.Expression).toMatch(/^\w+( \+ \w+){6}$/);
    }
  });
});

describe('alarms an on-call engineer would miss otherwise', () => {
  type Query = {
    Id: string;
    Expression?: string;
    MetricStat?: {
      Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] };
      Period: number;
      Stat: string;
    };
  };
  const queries = (key: keyof typeof ALARMS) => alarm(template, key).Metrics as Query[];
  const expressionOf = (key: keyof typeof ALARMS) => queries(key).find((q) => q.Expression)?.Expression;
  const stats = (key: keyof typeof ALARMS) =>
    Object.fromEntries(
      queries(key)
        .filter((q) => q.MetricStat)
        .map((q) => [q.Id, q.MetricStat!]),
    );

  it("fire on the edge's own 429s, counted from the access log (a function's 429 is not one), in 2 of 3 five-minute periods", () => {
    const [[, filter] = []] = all(template, 'AWS::Logs::MetricFilter');
    const [logsId] = all(template, 'AWS::Logs::LogGroup').find(([id]) => id.startsWith('ApiAccessLogs'))!;
    expect(filter!.Properties).toMatchObject({
      LogGroupName: { Ref: logsId },
      FilterPattern: EDGE_THROTTLE_PATTERN,
      MetricTransformations: [{ MetricNamespace: `Flowgate/${STACK}`, MetricName: 'EdgeThrottled', MetricValue: '1' }],
    });
    // The gateway's throttle and nothing else: its status and its own error message, which a function's answer never has.
    expect(EDGE_THROTTLE_PATTERN).toContain('$.status = "429"');
    expect(EDGE_THROTTLE_PATTERN).toContain('$.error = "Too Many Requests"');
    expect(alarm(template, 'edgeThrottles').Metrics).toEqual([
      expect.objectContaining({
        MetricStat: { Metric: { Namespace: `Flowgate/${STACK}`, MetricName: 'EdgeThrottled' }, Period: 300, Stat: 'Sum' },
      }),
    ]);
    expect(alarm(template, 'edgeThrottles')).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
  });

  it('fire on 3 or more 5xx in 15 minutes of a quiet API (where the rate alarm looks at nothing), and not on one blip', () => {
    const a = alarm(template, 'api5xxLowVolume');
    expect(a).toMatchObject({ Threshold: 3, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1 });
    // Quiet: under 3 × the rate alarm's minimum of a 5-minute window; busy windows count 0 here (the rate alarm decides).
    expect(expressionOf('api5xxLowVolume')).toBe('IF(FILL(requests, 0) < 300, FILL(errors, 0), 0)');
    expect(stats('api5xxLowVolume')).toMatchObject({
      requests: { Metric: { MetricName: 'Count' }, Period: 900, Stat: 'Sum' },
      errors: { Metric: { MetricName: '5xx' }, Period: 900, Stat: 'Sum' },
    });
  });

  it("fire when the account's Lambda concurrency (claimed or running) passes 80 % of its quota in 3 of 5 minutes", () => {
    expect(alarm(template, 'concurrencyHeadroom')).toMatchObject({
      Threshold: 800,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
    });
    expect(expressionOf('concurrencyHeadroom')).toBe('MAX([FILL(claimed, 0), FILL(running, 0)])');
    const s = stats('concurrencyHeadroom');
    for (const [id, name] of [
      ['claimed', 'ClaimedAccountConcurrency'],
      ['running', 'ConcurrentExecutions'],
    ] as const) {
      // No dimension: the account's, in this region.
      expect(s[id]).toEqual({ Metric: { Namespace: 'AWS/Lambda', MetricName: name }, Period: 60, Stat: 'Maximum' });
    }
    const raised = build({ lambdaConcurrencyLimit: 5000 }).template;
    expect(alarm(raised, 'concurrencyHeadroom').Threshold).toBe(4000);
    expect(() => build({ lambdaConcurrencyLimit: 0 })).toThrow(/lambdaConcurrencyLimit must be a whole number of at least 10/);
  });

  it('fire on DynamoDB throttles by reason (hot partition, table limit, on-demand maximum), reads and writes of the table and every index', () => {
    const [tableId] = all(template, 'AWS::DynamoDB::Table')[0]!;
    for (const [key, reason] of [
      ['dynamoHotPartition', 'KeyRangeThroughput'],
      ['dynamoTableLimit', 'AccountLimit'],
      ['dynamoOnDemandMax', 'MaxOnDemandThroughput'],
    ] as const) {
      expect(alarm(template, key)).toMatchObject({
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
      });
      const metrics = Object.values(stats(key)).map((m) => m.Metric);
      expect(metrics.length).toBe(2 * (1 + TABLE.indexes.length));
      expect(metrics.length).toBeLessThanOrEqual(10);
      expect(new Set(metrics.map((m) => m.MetricName))).toEqual(new Set([`Read${reason}ThrottleEvents`, `Write${reason}ThrottleEvents`]));
      const indexes = metrics.map((m) => m.Dimensions?.find((d) => d.Name === 'GlobalSecondaryIndexName')?.Value ?? 'table');
      expect(new Set(indexes)).toEqual(new Set(['table', ...TABLE.indexes.map((ix) => ix.name)]));
      for (const m of metrics) {
        expect(m.Namespace).toBe('AWS/DynamoDB');
        expect(m.Dimensions).toContainEqual({ Name: 'TableName', Value: { Ref: tableId } });
      }
      expect(expressionOf(key)).toMatch(/^FILL\(\w+, 0\)( \+ FILL\(\w+, 0\)){7}$/);
    }
  });

  it("fire when a release's startup sweep interrupted runs, and when it failed (the deployment went on)", () => {
    for (const [key, metric] of [
      ['releaseInterrupted', 'ReleaseInterrupted'],
      ['startupSweepFailed', 'StartupSweepFailed'],
    ] as const) {
      expect(alarm(template, key)).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: metric,
        Dimensions: [{ Name: 'service', Value: 'flowgate' }],
        Statistic: 'Sum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
      });
      expect(APP_METRICS[metric]).toEqual({ unit: 'Count', dimensions: [] });
    }
  });

  it('each have a runbook line in docs/deploying.md', () => {
    const page = readFileSync(new URL('../../docs/deploying.md', import.meta.url), 'utf8');
    for (const name of Object.values(ALARMS)) expect(page, name).toContain(`| \`…-${name}\``);
  });
});

describe('a prod stage', () => {
  const prod = (props: Partial<FlowgateStackProps>) => () => synth({ stage: 'prod', ...props });

  it('needs an alarm destination, or a waiver', () => {
    expect(prod({})).toThrow(/stage prod needs an alarm destination: alarmEmail or alarmTopicArn/);
    expect(prod({ alarmTopicArn: TOPIC_ARN })).not.toThrow();
    expect(prod({ waiveAlarmDestination: true })).not.toThrow();
  });
});
