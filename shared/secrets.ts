import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { withPlugins } from './sdk-plugins.ts';

/**
 * The string value of a Secrets Manager secret. Callers read it once per process, at a cold start
 * (a top-level await in the module that needs it), so a function's environment holds only the
 * secret's ARN, and a missing grant or secret fails the function's start loudly.
 */
export async function readSecret(secretId: string): Promise<string> {
  const client = withPlugins(new SecretsManagerClient({}));
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (!SecretString) throw new Error(`Secret ${secretId} has no string value`);
    return SecretString;
  } finally {
    client.destroy();
  }
}
