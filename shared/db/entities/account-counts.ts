import { getItems } from '../query.ts';
import { accountKey } from './rate-counters.ts';
import { scheduleCountKey } from './schedule.ts';
import { webhookCountKey } from './webhook.ts';

/**
 * An account's counts as they stand (one consistent BatchGet of its three items): the rate-limit
 * window the account item counts in and its count there, the enabled schedules, the webhooks.
 */
export async function readAccountCounts(accountId: string) {
  const items = await getItems([accountKey(accountId), scheduleCountKey(accountId), webhookCountKey(accountId)], true);
  const item = (sk: string) => items.find((i) => i.SK === sk) ?? {};
  const account = item('ACCOUNT');
  return {
    rateWindow: Number(account.rateWindow),
    rateCount: Number(account.rateCount ?? 0),
    enabledSchedules: Number(item('SCHEDULES').enabled ?? 0),
    webhooks: Number(item('WEBHOOKS').count ?? 0),
  };
}
