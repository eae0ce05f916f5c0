import { createHmac } from 'node:crypto';
import { handler as interactionsHandler } from '../../functions/http/integrations/slack-interactions.ts';
import { apiEvent, invoke } from './http.ts';

/**
 * A Slack interaction as Slack sends it to a channel's interactions URL: the payload form-encoded,
 * signed with `secret` (v0 signature over the timestamp `at`), through the route's handler.
 */
export function slackInteraction(channelId: string, payload: object, secret: string, at = Date.now()) {
  const raw = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = String(Math.floor(at / 1000));
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${raw}`).digest('hex')}`;
  return invoke(
    interactionsHandler,
    apiEvent({
      method: 'POST',
      path: `/api/integrations/slack/${channelId}/interactions`,
      params: { channelId },
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': ts, 'x-slack-signature': signature },
      body: raw,
    }),
  );
}
