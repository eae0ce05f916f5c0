// GET /console/channels: every member reads the list (masked, as the API shows it).
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { listChannels } from '../../../../../shared/domain/channels.ts';
import { type ChannelView, channelsPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session }) =>
  channelsPage(session, (await listChannels(session.principal)).items as ChannelView[]),
);
