import { Duration, type Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import * as triggers from 'aws-cdk-lib/triggers';
import { grantsOfWorker } from '../iam.ts';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { UNINSPECTED_RESOURCE } from '../nag.ts';
import { releaseDigest } from '../release.ts';
import { DEFAULTS, type FlowgateStackProps, RUNS_BATCH_SIZE } from '../settings.ts';
import { configureAsyncInvoke } from './async-invokes.ts';
import type { Functions } from './functions.ts';
import type { Releases } from './releases.ts';
import type { Bindable } from './route-function.ts';

// The workers' and sweeps' grants are WORKERS[...].grants (functions/bindings.ts: the functions check
// the same list's settings). Everything here is added to the stack itself, so the logical ids stay
// those of the one-file stack.

/** The queue consumers: the runs worker (worker/execute) and the notifications worker (worker/notify). */
export function addQueueWorkers({
  props,
  functions,
  resources,
  releases,
}: {
  props: FlowgateStackProps;
  functions: Functions;
  resources: Bindable;
  releases: Releases;
}) {
  const options = { timeoutSeconds: WORKER_TIMEOUT_SECONDS };
  const runsWorker = functions.create('worker/execute', options).bind(resources, grantsOfWorker('worker/execute'));
  const runsBatchingWindow = props.runsBatchingWindowSeconds ?? DEFAULTS.runsBatchingWindowSeconds;
  // Each queue invokes its worker's `live` alias: a release reaches it through a canary (releases.ts).
  // The runs worker has two: the main lane and the heavy lane (shared/engine/lanes.ts), each with its
  // own maximum concurrency, so a heavy account's runs never take the main lane's invocations.
  const runsAlias = releases.canary(runsWorker);
  const lanes = runsLaneConcurrency(props);
  for (const [queue, maxConcurrency] of [
    [resources.queue, lanes.main],
    [resources.heavyQueue, lanes.heavy],
  ] as const) {
    runsAlias.addEventSource(
      new SqsEventSource(queue, {
        batchSize: RUNS_BATCH_SIZE,
        ...(runsBatchingWindow > 0 && { maxBatchingWindow: Duration.seconds(runsBatchingWindow) }),
        maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
  }
  functions.group('Runs worker', runsWorker);
  const notifyWorker = functions.create('worker/notify', options).bind(resources, grantsOfWorker('worker/notify'));
  releases.canary(notifyWorker).addEventSource(
    new SqsEventSource(resources.notifyQueue, {
      batchSize: 10,
      maxBatchingWindow: Duration.seconds(1),
      maxConcurrency: workerConcurrency(props, 'notifyWorkerConcurrency'),
      reportBatchItemFailures: true,
    }),
  );
  // The notifications worker pushes back a failed delivery's visibility (its backoff); the event
  // source already lets it change the visibility of the messages it receives.
  notifyWorker.addEnvironment('NOTIFY_QUEUE_URL', resources.notifyQueue.queueUrl);
  functions.group('Notifications worker', notifyWorker);
  return { runsWorker, notifyWorker };
}

/**
 * The scheduled sweep (approval deadlines, crashed runs and schedule drift, every minute; the rule
 * invokes it asynchronously: two retries of an error, then `asyncFailures`) and the startup sweep, a
 * trigger that runs once every other function of a release is in place: call it after every other
 * function is grouped.
 */
export function addSweeps(
  stack: Stack,
  {
    props,
    functions,
    resources,
    table,
    asyncFailures,
    releases,
  }: { props: FlowgateStackProps; functions: Functions; resources: Bindable; table: ITable; asyncFailures: IQueue; releases: Releases },
) {
  const sweep = functions.create('sweep/scheduled', { timeoutSeconds: 60 }).bind(resources, grantsOfWorker('sweep/scheduled'), {
    asyncFailures: asyncFailures.queueArn,
  });
  configureAsyncInvoke(sweep, 'sweep/scheduled', asyncFailures);
  new events.Rule(stack, 'ScheduledSweep', {
    description: 'Runs the scheduled sweep every minute',
    schedule: events.Schedule.rate(Duration.minutes(1)),
    targets: [new eventTargets.LambdaFunction(sweep)],
  });
  // Drift repair lists the group's schedules (`schedules:list`): ListSchedules has no resource type, so it is on `*`.
  Validations.of(sweep.role as iam.Role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'scheduler:ListSchedules supports no resource-level permission; the sweep lists its own group (GroupName) only',
  });
  functions.group('Sweep', sweep);
  // The startup sweep: a deployment that changes the service is its restart (docs/architecture.md),
  // so the trigger runs once every function of the release is in place. It re-runs when its handler
  // version changes; RELEASE (a digest of the code and settings) changes that on every release.
  const startup = functions.create('sweep/startup', { timeoutSeconds: 300 }).bind(resources, grantsOfWorker('sweep/startup'));
  startup.addEnvironment('RELEASE', releaseDigest(stack.resolve(functions.environment)));
  startup.addEnvironment('RESTART_SWEEP', props.restartSweep ?? DEFAULTS.restartSweep);
  functions.group('Sweep', startup);
  new triggers.Trigger(stack, 'StartupSweep', {
    handler: startup,
    timeout: Duration.minutes(5),
    // ... and once the canaries have finished: an alias's update ends when its CodeDeploy deployment does.
    executeAfter: [table, ...functions.all().filter((f) => f !== startup), ...releases.all()],
  });
  acknowledgeTriggerProvider(stack);
  return { sweep, startup };
}

/**
 * The runs worker's two event sources' maximum concurrency, the main lane's and the heavy lane's: each
 * checked as any worker's, and together within the worker's reserved concurrency if any (both lanes
 * invoke the same function).
 */
function runsLaneConcurrency(props: FlowgateStackProps) {
  const main = workerConcurrency(props, 'runsWorkerConcurrency');
  const heavy = workerConcurrency(props, 'heavyRunsWorkerConcurrency');
  if (props.reservedConcurrency !== undefined && props.reservedConcurrency < main + heavy) {
    throw new Error(
      `runsWorkerConcurrency (${main}) and heavyRunsWorkerConcurrency (${heavy}) add up to ${main + heavy}, above reservedConcurrency (${props.reservedConcurrency}): the runs worker's queues would be throttled`,
    );
  }
  return { main, heavy };
}

/** A worker's maximum concurrency: within SQS's range, and within its reserved concurrency if any. */
function workerConcurrency(
  props: FlowgateStackProps,
  key: 'runsWorkerConcurrency' | 'heavyRunsWorkerConcurrency' | 'notifyWorkerConcurrency',
): number {
  const value = props[key] ?? DEFAULTS[key];
  if (!Number.isInteger(value) || value < 2 || value > 1000) throw new Error(`${key} must be a whole number from 2 to 1000, got ${value}`);
  if (props.reservedConcurrency !== undefined && props.reservedConcurrency < value) {
    throw new Error(`${key} (${value}) exceeds reservedConcurrency (${props.reservedConcurrency}): the queue would be throttled`);
  }
  return value;
}

/**
 * CDK's provider behind the startup-sweep trigger is written as raw CloudFormation, which
 * cdk-nag's rules cannot inspect; the rule in infra/nag.ts reports it until acknowledged here.
 */
function acknowledgeTriggerProvider(stack: Stack) {
  const provider = stack.node.children.find((c) => c.node.id.startsWith('AWSCDK.TriggerCustomResourceProvider'));
  if (!provider) throw new Error("CDK's trigger provider was not found");
  Validations.of(provider).acknowledge({
    id: UNINSPECTED_RESOURCE,
    reason:
      "CDK's trigger provider: the AWSLambdaBasicExecutionRole managed policy (its own logs) and lambda:InvokeFunction on the startup sweep's versions only (asserted in test/infra); its runtime is CDK's",
  });
}
