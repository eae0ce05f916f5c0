import { Duration } from 'aws-cdk-lib';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { ASYNC_INVOKES, ASYNC_RETRY_ATTEMPTS, type AsyncFunction } from '../../functions/async-invokes.ts';

/**
 * Lambda's asynchronous invocation settings of a function AWS invokes asynchronously
 * (functions/async-invokes.ts): an EventInvokeConfig on `$LATEST` with two retries, the function's
 * maximum event age, and the on-failure queue as destination. Lambda sends the destination's
 * records with the function's own role: its `async:on-failure` grant (infra/iam.ts) is `sqs:SendMessage`
 * on that queue and nothing else (CDK's SqsDestination would grant GetQueueAttributes and GetQueueUrl as well).
 */
export function configureAsyncInvoke(fn: LambdaFunction, handler: AsyncFunction, onFailure: IQueue) {
  fn.configureAsyncInvoke({
    retryAttempts: ASYNC_RETRY_ATTEMPTS,
    maxEventAge: Duration.seconds(ASYNC_INVOKES[handler].maxEventAgeSeconds),
    onFailure: { bind: () => ({ destination: onFailure.queueArn }) },
  });
}
