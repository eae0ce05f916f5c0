// POST /api/integrations/slack/{channelId}/interactions (Slack signs it; answered within Slack's 3 s)
import { route } from './slack-interactions.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { slackInteraction } from '../../../shared/notifications/slack-interactions.ts';

export const handler = http(route, async ({ event, params, request }) => {
  const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '';
  await slackInteraction(params.channelId, {
    headers: event.headers,
    raw,
    sourceIp: request.sourceIp,
    userAgent: event.headers['user-agent'],
  });
  return { statusCode: 200, headers: { 'cache-control': 'no-store' }, body: '' };
});
