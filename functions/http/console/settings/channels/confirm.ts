// GET /console/channels/{channelId}/delete: "Delete channel 'Team Slack'?".
import { route } from './confirm.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { showChannel } from '../../../../../shared/domain/channels.ts';
import { confirmDeletePage } from '../../parts/confirm-delete-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const c = await showChannel(session.principal, params.channelId);
  return confirmDeletePage(session, {
    section: '/console/channels',
    what: `channel '${c.name}'`,
    action: `/console/channels/${c.id}/delete`,
    back: `/console/channels/${c.id}`,
    detail: 'Approval steps that name it send nothing through it any more (their runs still wait for a decision).',
  });
});
