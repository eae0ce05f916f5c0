import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';
import { ChannelType } from '../channel-types.ts';
import { queryAll } from '../query.ts';
import { SEALED_FIELDS } from './account-secret.ts';

// Access patterns: get by account + id (PK CHANNELS#<account>, SK CH#<id>) · list an account's
// channels (same partition, the sealed secrets left out by projection) · get by account + name (a
// name claim, SK NAME#<name>, which also keeps names unique) · get by id alone (a pointer,
// PK CHANNEL#<id>, for Slack's interactivity requests, whose URL names the channel only).

export const Channel = z.object({
  channelId: z.string(),
  accountId: z.string(),
  name: z.string(),
  type: ChannelType,
  /** Slack: where a step without `to` posts. */
  defaultChannel: z.string().optional(),
  /** Email: the sender address (an address of the stack's verified SES identity). */
  from: z.string().optional(),
  /** The write-only fields as the API shows them (`••••` and a hint), by field name. */
  masks: z.record(z.string(), z.string()),
  /** The write-only fields (bot token, signing secret, webhook URL) as one sealed JSON object (shared/keyring.ts). */
  ...SEALED_FIELDS,
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type Channel = z.infer<typeof Channel>;
export const ChannelSummary = Channel.omit({ kid: true, edk: true, iv: true, ct: true, tag: true });
export type ChannelSummary = z.infer<typeof ChannelSummary>;

const partition = (accountId: string) => `CHANNELS#${accountId}`;
export const channelKey = (accountId: string, channelId: string) => ({ PK: partition(accountId), SK: `CH#${channelId}` });
const nameKey = (accountId: string, name: string) => ({ PK: partition(accountId), SK: `NAME#${name.toLowerCase()}` });
const pointerKey = (channelId: string) => ({ PK: `CHANNEL#${channelId}`, SK: 'CHANNEL' });

const put = (Item: Record<string, unknown>, condition?: string) => ({
  Put: { TableName: tableName(), Item, ...(condition ? { ConditionExpression: condition } : {}) },
});
const del = (Key: Record<string, string>, condition?: string) => ({
  Delete: { TableName: tableName(), Key, ...(condition ? { ConditionExpression: condition } : {}) },
});

async function transact(items: unknown[]): Promise<boolean> {
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items as never[] }));
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}

/** The item: the channel's own `type` is stored as `kind` (`type` names the item's kind in the table). */
const stored = (c: Channel) => ({ ...channelKey(c.accountId, c.channelId), ...c, type: 'channel', kind: c.type });

/** Create with its name claim and pointer; false when the account has a channel of that name (any case). */
export const putChannel = (c: Channel, extra: readonly unknown[] = []) =>
  transact([
    put(stored(c), 'attribute_not_exists(PK)'),
    put({ ...nameKey(c.accountId, c.name), type: 'channelName', channelId: c.channelId }, 'attribute_not_exists(PK)'),
    put({ ...pointerKey(c.channelId), type: 'channelPointer', accountId: c.accountId }, 'attribute_not_exists(PK)'),
    ...extra,
  ]);

/**
 * Replace a channel as read (`before`): conditional on its `updatedAt`, and on the new name's claim
 * when the name changes (the old claim goes). 'conflict': the name is taken; 'changed': the channel
 * changed or went meanwhile.
 */
export async function replaceChannel(
  before: Channel,
  next: Channel,
  extra: readonly unknown[] = [],
): Promise<'ok' | 'conflict' | 'changed'> {
  const renamed = before.name.toLowerCase() !== next.name.toLowerCase();
  const items = [
    {
      Put: {
        TableName: tableName(),
        Item: stored(next),
        ConditionExpression: 'updatedAt = :seen',
        ExpressionAttributeValues: { ':seen': before.updatedAt },
      },
    },
    ...(renamed
      ? [
          put({ ...nameKey(next.accountId, next.name), type: 'channelName', channelId: next.channelId }, 'attribute_not_exists(PK)'),
          del(nameKey(before.accountId, before.name)),
        ]
      : []),
    ...extra,
  ];
  try {
    await db().send(new TransactWriteCommand({ TransactItems: items as never[] }));
    return 'ok';
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    return reasons[1]?.Code === 'ConditionalCheckFailed' ? 'conflict' : 'changed';
  }
}

/** Delete with its name claim and pointer; false when there was no such channel. */
export const deleteChannelItems = (c: Pick<Channel, 'accountId' | 'channelId' | 'name'>, extra: readonly unknown[] = []) =>
  transact([
    del(channelKey(c.accountId, c.channelId), 'attribute_exists(PK)'),
    del(nameKey(c.accountId, c.name)),
    del(pointerKey(c.channelId)),
    ...extra,
  ]);

const parse = (item: Record<string, unknown> | undefined) => (item ? Channel.parse({ ...item, type: item.kind }) : undefined);

export async function getChannel(accountId: string, channelId: string): Promise<Channel | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: channelKey(accountId, channelId) }));
  return parse(Item);
}

/** A channel by name (any case), through its claim. */
export async function getChannelByName(accountId: string, name: string): Promise<Channel | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: nameKey(accountId, name) }));
  return Item ? getChannel(accountId, Item.channelId as string) : undefined;
}

/** A channel by id alone (Slack's requests): the pointer names its account. */
export async function getChannelById(channelId: string): Promise<Channel | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: pointerKey(channelId) }));
  return Item ? getChannel(Item.accountId as string, channelId) : undefined;
}

/** The account's channels, without their sealed fields. */
export const listChannelItems = (accountId: string): Promise<ChannelSummary[]> =>
  queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ProjectionExpression: 'channelId, accountId, #name, kind, defaultChannel, #from, masks, createdAt, updatedAt',
      ExpressionAttributeNames: { '#name': 'name', '#from': 'from' },
      ExpressionAttributeValues: { ':pk': partition(accountId), ':sk': 'CH#' },
    },
    (i) => ChannelSummary.parse({ ...i, type: i.kind }),
  );
