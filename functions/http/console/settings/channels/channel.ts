// GET /console/channels/{channelId}: 404 for another account's.
import { route } from './channel.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { recentChannelDeliveries } from '../../../../../shared/domain/channel-console.ts';
import { showChannel } from '../../../../../shared/domain/channels.ts';
import type { ChannelView } from './list-view.tsx';
import { channelPage } from './channel-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const c = (await showChannel(session.principal, params.channelId)) as ChannelView;
  return channelPage(session, c, { deliveries: await recentChannelDeliveries(session.principal, params.channelId) });
});
