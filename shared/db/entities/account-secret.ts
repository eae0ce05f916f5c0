import { type TransactItem, writeWith } from '../transact.ts';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { applied, buildUpdate } from '../update.ts';
import { isConditionFailure } from '../../errors.ts';

// Access patterns: get by account and name · list an account's names (one partition per account,
// the ciphertext left out of the listing by projection). The value is stored sealed (shared/keyring.ts).
/** A value sealed by shared/keyring.ts: the keyring that sealed it, the encrypted data key, the GCM iv, ciphertext and tag (base64). */
export const SEALED_FIELDS = { kid: z.string(), edk: z.string(), iv: z.string(), ct: z.string(), tag: z.string() };

export const AccountSecret = z.object({
  accountId: z.string(),
  name: z.string(),
  ...SEALED_FIELDS,
  createdAt: z.number(),
  updatedAt: z.number(),
  lastUsedAt: z.number().optional(),
  /** Hosts a step may send it to (lower-case names or `*.` patterns); absent: any. */
  allowedHosts: z.array(z.string()).optional(),
  /** Whether members may reference it in definitions; absent (secrets from before the field): `use`. */
  members: z.enum(['use', 'none']).optional(),
  /** The user who last set it (created it, replaced its value or its rules); absent on secrets from before. */
  updatedBy: z.string().optional(),
});
export type AccountSecret = z.infer<typeof AccountSecret>;
export const SecretSummary = AccountSecret.pick({
  name: true,
  createdAt: true,
  updatedAt: true,
  lastUsedAt: true,
  allowedHosts: true,
  members: true,
  updatedBy: true,
});
export type SecretSummary = z.infer<typeof SecretSummary>;
/** Who may reference a secret besides admins: a secret stored before the field existed is `use`. */
export const membersOf = (s: Pick<SecretSummary, 'members'>) => s.members ?? 'use';

type SealedFields = Pick<AccountSecret, 'kid' | 'edk' | 'iv' | 'ct' | 'tag'>;

export const secretKey = (accountId: string, name: string) => ({ PK: `SECRET#${accountId}`, SK: `SECRET#${name}` });

/** Create; false when the account already has a secret of this name. */
export async function putSecret(s: AccountSecret, extra: readonly TransactItem[] = []): Promise<boolean> {
  return applied(
    writeWith(
      {
        Put: {
          TableName: tableName(),
          Item: { ...secretKey(s.accountId, s.name), type: 'accountSecret', ...s },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      extra,
    ),
  );
}

/** What an update may change: the sealed value, the host binding (null removes it), who may use it. */
export type SecretChange = { sealed?: SealedFields; allowedHosts?: string[] | null; members?: 'use' | 'none'; updatedBy?: string };

/**
 * Change a secret; the summary after, or undefined when there is no such secret. With `extra` (its
 * audit entry) in one transaction, which returns no values: the summary is then read back.
 */
export async function updateSecretItem(
  accountId: string,
  name: string,
  change: SecretChange,
  now: number,
  extra: readonly TransactItem[] = [],
) {
  const set: Record<string, unknown> = { ...change.sealed, updatedAt: now };
  if (change.allowedHosts) set.allowedHosts = change.allowedHosts;
  if (change.members) set.members = change.members;
  if (change.updatedBy) set.updatedBy = change.updatedBy;
  const update = buildUpdate(secretKey(accountId, name), set, change.allowedHosts === null ? ['allowedHosts'] : [], {
    expression: 'attribute_exists(PK)',
  });
  try {
    if (extra.length) {
      await writeWith({ Update: update }, extra);
      const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: secretKey(accountId, name), ConsistentRead: true }));
      return Item ? SecretSummary.parse(Item) : undefined;
    }
    const { Attributes } = await db().send(new UpdateCommand({ ...update, ReturnValues: 'ALL_NEW' }));
    return SecretSummary.parse(Attributes);
  } catch (e) {
    if (isConditionFailure(e)) return undefined;
    throw e;
  }
}

/** Delete; false when there was no such secret. */
export async function deleteSecret(accountId: string, name: string, extra: readonly TransactItem[] = []): Promise<boolean> {
  return applied(
    writeWith({ Delete: { TableName: tableName(), Key: secretKey(accountId, name), ConditionExpression: 'attribute_exists(PK)' } }, extra),
  );
}

export async function getSecret(accountId: string, name: string): Promise<AccountSecret | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: secretKey(accountId, name) }));
  return Item ? AccountSecret.parse(Item) : undefined;
}

/** The account's secrets by name, without their sealed values. */
export async function listSecrets(accountId: string): Promise<SecretSummary[]> {
  const out: SecretSummary[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk',
        ProjectionExpression: '#name, createdAt, updatedAt, lastUsedAt, allowedHosts, #members, updatedBy',
        ExpressionAttributeNames: { '#name': 'name', '#members': 'members' },
        ExpressionAttributeValues: { ':pk': `SECRET#${accountId}` },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of res.Items ?? []) out.push(SecretSummary.parse(item));
    startKey = res.LastEvaluatedKey;
  } while (startKey);
  return out;
}

/** Note a use (one small write per cache fill of the worker); a deleted secret is not brought back. */
export async function touchSecret(accountId: string, name: string, now: number): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: secretKey(accountId, name),
        UpdateExpression: 'SET lastUsedAt = :now',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
  }
}
