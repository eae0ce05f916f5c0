import { config } from '../config.ts';
import {
  type Channel,
  type ChannelSummary,
  deleteChannelItems,
  getChannel,
  listChannelItems,
  putChannel,
  replaceChannel,
} from '../db/entities/channel.ts';
import { getUser } from '../db/entities/user.ts';
import { adapters, channelKinds } from '../channels/index.ts';
import {
  type ChannelKind,
  type ChannelSetting,
  type ChannelSettings,
  isMasked,
  type OpenChannel,
  type SendResult,
} from '../channels/types.ts';
import { Refused, refused, retryConflicts } from '../db/conflicts.ts';
import { badRequest, conflict, type FieldError, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { keyring, seal, unseal } from '../keyring.ts';
import type { CreateChannelBody, UpdateChannelBody } from '../schemas/channels.ts';
import { writeAll } from '../db/transact.ts';
import { logger } from '../logger.ts';
import { audited, changedFields } from '../db/audited.ts';
import type { Principal } from './principal.ts';

/**
 * Approval channels (Slack, email, Teams), per account: admins write them, every member reads them
 * (masked). Which settings a channel has, which of them are write-only and how those show is its
 * kind's adapter's (shared/channels/<kind>.ts). The write-only fields are sealed together like
 * account secrets (shared/keyring.ts), bound to the account and the channel's id.
 */

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;
type Secrets = ChannelSettings;
const kindOf = (type: Channel['type']): ChannelKind => channelKinds[type];
/** A kind's settings: write-only (sealed) or plain (stored as they are). */
const fieldsOf = (type: Channel['type'], secret: boolean) =>
  (Object.keys(kindOf(type).settings) as ChannelSetting[]).filter((f) => f in kindOf(type).secrets === secret);
/** The write-only settings of `values` (those of a `type` channel). */
const secretsOf = (type: Channel['type'], values: ChannelSettings): Secrets =>
  Object.fromEntries(fieldsOf(type, true).flatMap((f) => (values[f] ? [[f, values[f]]] : [])));

const context = (accountId: string, channelId: string) => ({ accountId, channel: channelId });
const channelNotFound = (id: string) => notFound('CHANNEL_NOT_FOUND', `Channel ${id} does not exist.`);
const nameTaken = (name: string) => conflict('CHANNEL_EXISTS', `A channel named ${name} exists in this account.`);

export const channelView = (c: ChannelSummary) => ({
  id: c.channelId,
  name: c.name,
  type: c.type,
  ...kindOf(c.type).view?.(c),
  ...(c.from ? { from: c.from } : {}),
  ...c.masks,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

/** With SES_IDENTITY set, a sender must belong to it: the address itself, or an address of the domain. */
function checkSender(from: string | undefined) {
  const identity = config().SES_IDENTITY?.toLowerCase();
  if (!from || !identity) return;
  const address = from.toLowerCase();
  if (address === identity || (!identity.includes('@') && address.endsWith(`@${identity}`))) return;
  throw validationFailed([{ path: 'from', message: `must be an address of the verified SES identity ${identity}` }]);
}

async function sealed(type: Channel['type'], accountId: string, channelId: string, secrets: Secrets) {
  const { kid, edk, iv, ct, tag } = await seal(keyring(), JSON.stringify(secrets), context(accountId, channelId));
  const shown = kindOf(type).secrets;
  const masks = Object.fromEntries(
    Object.entries(shown).flatMap(([f, mask]) => (secrets[f as ChannelSetting] ? [[f, mask(secrets[f as ChannelSetting] as string)]] : [])),
  );
  return { kid, edk, iv, ct, tag, masks };
}

/**
 * The change without the write-only settings it sends back as the view showed them (the mask keeps
 * the stored value, as for every write-only value: docs/secrets.md); a mask that is not the one the
 * view shows (or any mask on a create, `before` undefined) is a 400 naming the field.
 */
function unmasked<C extends ChannelSettings>(type: Channel['type'], change: C, before?: Channel): C {
  const errors: FieldError[] = [];
  const out: C = { ...change };
  for (const f of fieldsOf(type, true)) {
    const v = change[f];
    if (typeof v !== 'string' || !isMasked(v)) continue;
    if (before && v === before.masks[f]) delete out[f];
    else errors.push({ path: f, message: 'a masked value keeps the stored one only as the view shows it; send the new value' });
  }
  if (errors.length) throw validationFailed(errors);
  return out;
}

/** `type` may be sent back as it is; it cannot change (a channel of another kind is a new channel). */
function checkType(before: Channel, type: string | undefined) {
  if (type === undefined || type === before.type) return;
  throw badRequest('IMMUTABLE_FIELD', `A channel's type cannot change: this one is ${before.type}; create a ${type} channel instead.`, [
    { path: 'type', message: `cannot change (the channel is ${before.type})` },
  ]);
}

const channelObject = (c: Pick<Channel, 'channelId' | 'name'>) => ({ type: 'channel', id: c.channelId, name: c.name });

export async function createChannel(p: SessionPrincipal, input: CreateChannelBody, now = Date.now()) {
  unmasked(input.type, input);
  checkSender(input.from);
  const channelId = newId('ch');
  const channel: Channel = {
    channelId,
    accountId: p.accountId,
    name: input.name,
    type: input.type,
    ...Object.fromEntries(fieldsOf(input.type, false).flatMap((f) => (input[f] ? [[f, input[f]]] : []))),
    ...(await sealed(input.type, p.accountId, channelId, secretsOf(input.type, input))),
    createdAt: now,
    updatedAt: now,
  };
  const entry = audited(p, 'channel.created', channelObject(channel), { channelType: channel.type }, now);
  if (!(await putChannel(channel, [entry]))) throw nameTaken(input.name);
  return channelView(channel);
}

export async function listChannels(p: Pick<Principal, 'accountId'>) {
  const items = await listChannelItems(p.accountId);
  return { items: items.sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1)).map(channelView), nextCursor: null };
}

/** A channel of the caller's account, or 404 (another account's id is indistinguishable from none). */
export async function requireChannel(accountId: string, channelId: string): Promise<Channel> {
  const c = await getChannel(accountId, channelId);
  if (!c) throw channelNotFound(channelId);
  return c;
}

export const showChannel = async (p: Pick<Principal, 'accountId'>, channelId: string) =>
  channelView(await requireChannel(p.accountId, channelId));

/**
 * Change what is sent; a field of another type is a 400 naming it. Write-only fields not sent, or sent
 * as the view's mask, stay; `type` is accepted unchanged (400 `IMMUTABLE_FIELD` otherwise).
 */
export async function updateChannel(p: SessionPrincipal, channelId: string, sent: UpdateChannelBody, now = Date.now()) {
  return retryConflicts(
    async () => {
      const before = await requireChannel(p.accountId, channelId);
      checkType(before, sent.type);
      const foreign = Object.entries(sent).filter(
        ([k, v]) => v !== undefined && k !== 'name' && k !== 'type' && !(k in kindOf(before.type).settings),
      );
      if (foreign.length) throw validationFailed(foreign.map(([k]) => ({ path: k, message: `not a field of a ${before.type} channel` })));
      const change = unmasked(before.type, sent as ChannelSettings, before) as UpdateChannelBody;
      checkSender(change.from);
      const touchesSecrets = fieldsOf(before.type, true).some((f) => change[f] !== undefined);
      const secrets = touchesSecrets ? { ...(await openSecrets(before)), ...secretsOf(before.type, change as ChannelSettings) } : undefined;
      const { defaultChannel: dc, ...kept } = before;
      const next: Channel = {
        ...kept,
        ...(change.name ? { name: change.name } : {}),
        ...(change.from ? { from: change.from } : {}),
        ...(change.defaultChannel === null ? {} : (change.defaultChannel ?? dc) ? { defaultChannel: change.defaultChannel ?? dc } : {}),
        ...(secrets ? await sealed(before.type, p.accountId, channelId, secrets) : {}),
        updatedAt: Math.max(now, before.updatedAt + 1),
      };
      // The fields sent (a write-only one by name only, never its value).
      const changed = changedFields(sent).filter((k) => k !== 'type');
      const result = await replaceChannel(before, next, [audited(p, 'channel.updated', channelObject(next), { changed }, now)]);
      if (result === 'conflict') throw nameTaken(next.name);
      // Changed or gone since it was read: read it again.
      if (result === 'changed') throw new Refused();
      return channelView(next);
    },
    {
      attempts: 4,
      retryOn: refused,
      exhausted: () => {
        throw conflict('CHANNEL_CHANGED', 'The channel was changed concurrently; try again.');
      },
    },
  );
}

export async function removeChannel(p: SessionPrincipal, channelId: string): Promise<void> {
  const c = await requireChannel(p.accountId, channelId);
  if (!(await deleteChannelItems(c, [audited(p, 'channel.deleted', channelObject(c), { channelType: c.type })])))
    throw channelNotFound(channelId);
}

const openSecrets = async (c: Channel): Promise<Secrets> =>
  JSON.parse(await unseal(keyring(), c, context(c.accountId, c.channelId))) as Secrets;

/** The channel with its write-only fields opened, for its adapter. Never logged. */
export async function openChannel(c: Channel): Promise<OpenChannel> {
  const { channelId, accountId, name, type, defaultChannel, from } = c;
  return {
    channelId,
    accountId,
    name,
    type,
    ...(defaultChannel ? { defaultChannel } : {}),
    ...(from ? { from } : {}),
    ...(await openSecrets(c)),
  };
}

/** Send a test message (to `to`, else the channel's default conversation or the caller's address) and report the provider's answer. */
export async function testChannel(p: SessionPrincipal, channelId: string, to: string | undefined) {
  const c = await requireChannel(p.accountId, channelId);
  const fallback = kindOf(c.type).testsCaller && !to ? (await getUser(p.accountId, p.userId))?.email : undefined;
  const r: SendResult = await adapters[c.type].test(await openChannel(c), to ?? fallback);
  // A test changes nothing but is recorded (best effort: the provider's answer stands either way).
  await writeAll([audited(p, 'channel.tested', channelObject(c), { ok: r.ok, status: r.status ?? null })]).catch((error: unknown) =>
    logger.warn('channel test not audited', { channelId, error: error as Error }),
  );
  return { ok: r.ok, status: r.status ?? null, error: r.error ?? null, retryAfterSeconds: r.retryAfterSeconds ?? null };
}
