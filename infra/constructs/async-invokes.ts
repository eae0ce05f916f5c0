import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { ASYNC_INVOKES, ASYNC_RETRY_ATTEMPTS, type AsyncFunction } from '../../functions/async-invokes.ts';

/** The Sid of the statement that lets Lambda deliver the on-failure records (not one of the function's grants). */
export const ASYNC_DESTINATION_SID = 'AsyncInvokeOnFailureDestination';

/**
 * Lambda's asynchronous invocation settings of a function AWS invokes asynchronously
 * (functions/async-invokes.ts): an EventInvokeConfig on `$LATEST` with two retries, the function's
 * maximum event age, and the on-failure queue as destination. Lambda sends the destination's
 * records with the function's own role: it gets `sqs:SendMessage` on that queue, and nothing else
 * (the function's code never sends there)
 * (CDK's SqsDestination would grant GetQueueAttributes and GetQueueUrl as well).
 */
export function configureAsyncInvoke(fn: LambdaFunction, handler: AsyncFunction, onFailure: IQueue) {
  // A statement of its own (a Sid: policy minimization would merge it into a grant's SendMessage).
  fn.addToRolePolicy(
    new iam.PolicyStatement({ sid: ASYNC_DESTINATION_SID, actions: ['sqs:SendMessage'], resources: [onFailure.queueArn] }),
  );
  fn.configureAsyncInvoke({
    retryAttempts: ASYNC_RETRY_ATTEMPTS,
    maxEventAge: Duration.seconds(ASYNC_INVOKES[handler].maxEventAgeSeconds),
    onFailure: { bind: () => ({ destination: onFailure.queueArn }) },
  });
}
