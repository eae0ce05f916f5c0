import { RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';

/** The stack's keys: the one that seals account secrets, and the two signing secrets. */
export type Secrets = {
  /** Account secrets are sealed under data keys of this key (envelope encryption, shared/keyring.ts). */
  secretsKey: kms.IKey;
  /** Signs reviewers' links (shared/domain/review-links.ts). */
  reviewLinkSecret: secretsmanager.Secret;
  /** Signs list cursors (shared/db/cursor.ts). */
  cursorSecret: secretsmanager.Secret;
};

/** Adds the keys to the stack itself (so their logical ids stay those of the one-file stack). */
export function addSecrets(stack: Stack, props: { stage: string; secretsKeyArn?: string }): Secrets {
  const secretsKey = props.secretsKeyArn
    ? kms.Key.fromKeyArn(stack, 'SecretsKey', props.secretsKeyArn)
    : new kms.Key(stack, 'SecretsKey', {
        description: `Flowgate ${props.stage}: seals the account secrets of workflow definitions`,
        enableKeyRotation: true,
        removalPolicy: RemovalPolicy.RETAIN,
      });
  // Read only by the functions with the `links:sign` grant (the link pages, the notifications worker
  // that sends them).
  const reviewLinkSecret = new secretsmanager.Secret(stack, 'ReviewLinkSecret', {
    description: "Signs reviewers' approval links (mail, Slack, Teams)",
    generateSecretString: { passwordLength: 64, excludePunctuation: true },
  });
  Validations.of(reviewLinkSecret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'Rotating the review-link key invalidates every approval link already sent, and warm functions keep the old key until their next cold start; it is rotated by hand if ever (docs/deploying.md "Operating")',
  });
  // The same value must reach every function that pages. Those functions get its ARN and read it at
  // a cold start (shared/db/cursor.ts): no function environment holds it.
  const cursorSecret = new secretsmanager.Secret(stack, 'CursorSecret', {
    description: 'Signs the opaque list cursors of the v1 API',
    generateSecretString: { passwordLength: 48, excludePunctuation: true },
  });
  Validations.of(cursorSecret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason:
      'Rotating the cursor-signing key only invalidates the list cursors in flight, and warm functions keep the old key until their next cold start; it is rotated by hand if ever (docs/deploying.md "Operating")',
  });
  return { secretsKey, reviewLinkSecret, cursorSecret };
}
