import type { Route } from '../../../shared/http/route.ts';
import { SLACK_INTERACTIONS_PATH } from '../../../shared/links.ts';
import { ChannelParams } from '../../../shared/schemas/channels.ts';
import { none, refuses } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: SLACK_INTERACTIONS_PATH,
  handler: 'http/integrations/slack-interactions',
  summary: "A Slack channel's interactivity Request URL: Approve/Reject clicks (Slack-signed, form-encoded `payload`)",
  tag: 'Integrations',
  auth: none,
  // Opens the channel's signing secret, decides (the run moves: table and queue) and answers in Slack.
  grants: ['table:read', 'table:write', 'queue:send', 'secrets:decrypt'],
  // A malformed id, an unknown one or not a Slack channel: 404 CHANNEL_NOT_FOUND (nothing to check a signature with).
  params: ChannelParams,
  status: 200,
  // Slack's payloads carry the whole message they came from.
  maxBodyBytes: 256 * 1024,
  errors: [...refuses(401, 'INVALID_SLACK_SIGNATURE')],
} as const satisfies Route;
