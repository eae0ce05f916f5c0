// POST /console/channels/{channelId}/deliveries/{deliveryId}/redeliver: a delivery of another channel,
// run or account is the same 404.
import { route } from './redeliver.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { redeliverOnChannel } from '../../../../../shared/domain/channel-console.ts';

export const handler = consoleHttp(route, async ({ session, params }) => {
  await redeliverOnChannel(session.principal, params.channelId, params.deliveryId);
  return seeOther(`/console/channels/${params.channelId}#deliveries`);
});
