import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import type { Grant } from '../../shared/http/route.ts';

/** The stateful resources a function can be bound to. */
export type Bindable = { table: ITable; queue: IQueue; notifyQueue: IQueue; bucket: IBucket };

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export type RouteFunctionProps = {
  /** Module under `functions/` exporting `handler`, without extension (as in the route table). */
  handler: string;
  memoryMb?: number;
  timeoutSeconds?: number;
  reservedConcurrency?: number;
  environment?: Record<string, string>;
  /** Of the function's log group; RETAIN by default. */
  logRemovalPolicy?: RemovalPolicy;
};

/**
 * A Lambda with the house defaults: Node 24 on arm64, ESM bundle with the AWS SDK inside (one
 * version, the one the tests ran against), source maps, X-Ray, and its own log group with retention.
 */
export class RouteFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: RouteFunctionProps) {
    // Created explicitly so retention is a plain property instead of a LogRetention custom resource.
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    super(scope, id, {
      entry: `${repoRoot}functions/${props.handler}.ts`,
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: `${repoRoot}package-lock.json`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb ?? 256,
      timeout: Duration.seconds(props.timeoutSeconds ?? 10),
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      ...(props.reservedConcurrency !== undefined && { reservedConcurrentExecutions: props.reservedConcurrency }),
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: {
        format: OutputFormat.ESM,
        minify: true,
        sourceMap: true,
        target: 'node24',
        mainFields: ['module', 'main'],
        // Some bundled CommonJS dependencies still call require(); ESM output has none.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
        externalModules: [],
        forceDockerBundling: false,
      },
    });
  }

  /**
   * Grant exactly what the route declares, and hand over the matching resource names as env vars.
   * Returns this function, so a call can be chained onto its creation.
   */
  bind(resources: Bindable, grants: readonly Grant[]): this {
    for (const grant of grants) {
      switch (grant) {
        case 'table:read':
          resources.table.grantReadData(this);
          this.addEnvironment('TABLE_NAME', resources.table.tableName);
          break;
        case 'table:write':
          resources.table.grantWriteData(this);
          this.addEnvironment('TABLE_NAME', resources.table.tableName);
          break;
        case 'queue:send':
          // Whatever starts or moves runs also emits events, which go to the notifications queue.
          resources.queue.grantSendMessages(this);
          resources.notifyQueue.grantSendMessages(this);
          this.addEnvironment('RUNS_QUEUE_URL', resources.queue.queueUrl);
          this.addEnvironment('NOTIFY_QUEUE_URL', resources.notifyQueue.queueUrl);
          break;
        case 'bucket:read':
          resources.bucket.grantRead(this);
          this.addEnvironment('ARTIFACTS_BUCKET', resources.bucket.bucketName);
          break;
        case 'bucket:write':
          resources.bucket.grantPut(this);
          this.addEnvironment('ARTIFACTS_BUCKET', resources.bucket.bucketName);
          break;
        default:
          grant satisfies never;
      }
    }
    return this;
  }
}
