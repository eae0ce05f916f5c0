import { getDelivery, listExecutionDeliveries, type Delivery } from '../db/entities/delivery.ts';
import { listExecutions } from '../db/entities/execution.ts';
import { notFound } from '../errors.ts';
import { requireChannel } from './channels.ts';
import { deliveryView, redeliver } from './deliveries.ts';
import type { SessionPrincipal } from './schedules.ts';

// A channel's recent deliveries, as the console's channel page shows them. The delivery log is kept
// by run and by approval, not by channel: the page reads the deliveries of the account's newest
// RECENT_RUNS runs (a query each) and keeps the messages sent on this channel, named in their target
// (`<channel name>: <to>`). Older ones are in their runs' pages.

/** Runs whose deliveries the channel page reads. */
export const RECENT_RUNS = 25;
/** Deliveries the channel page shows. */
export const SHOWN_DELIVERIES = 20;

const onChannel = (d: Pick<Delivery, 'channel' | 'target'>, c: { type: string; name: string }) =>
  d.channel === c.type && d.target.startsWith(`${c.name}: `);

export async function recentChannelDeliveries(p: SessionPrincipal, channelId: string) {
  const c = await requireChannel(p.accountId, channelId);
  const runs = await listExecutions(p.accountId, {}, RECENT_RUNS);
  const pages = await Promise.all(runs.items.map((e) => listExecutionDeliveries(p.accountId, e.executionId, 50)));
  return pages
    .flatMap((pg) => pg.items)
    .filter((d) => onChannel(d, c))
    .sort((a, b) => b.createdAt - a.createdAt)
    .slice(0, SHOWN_DELIVERIES)
    .map(deliveryView);
}

/** Send one of the channel's deliveries again (the API's redeliver); a delivery of another channel, run or account is 404. */
export async function redeliverOnChannel(p: SessionPrincipal, channelId: string, deliveryId: string) {
  const c = await requireChannel(p.accountId, channelId);
  const d = await getDelivery(p.accountId, deliveryId);
  if (!d || !onChannel(d, c)) throw notFound('DELIVERY_NOT_FOUND', `Delivery ${deliveryId} does not exist.`);
  return redeliver(p.accountId, deliveryId, Date.now(), p);
}
