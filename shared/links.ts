import { config } from './config.ts';

/**
 * The paths of the routes the service links to in what it sends (events, approval messages, channel
 * views), in the route table's syntax. The route modules (functions/http/<area>/<action>.route.ts)
 * declare their `path` with these same constants, so a link and its route cannot drift apart; they
 * live down here because the code that builds links (engine, domain, adapters) may not import
 * functions/.
 */
export const APPROVAL_LINK_PATH = '/api/webhook-trigger/approval/{approvalId}/{decision}';
/** A reviewer's own link (shared/domain/review-links.ts). */
export const REVIEW_PATH = '/api/reviews/{approvalId}';
/** A wait_for_callback's URL, handed to the system that reports (its heartbeat is `${CALLBACK_PATH}/heartbeat`). */
export const CALLBACK_PATH = '/api/v1/callbacks/{callbackId}';
/** A Slack channel's interactivity Request URL. */
export const SLACK_INTERACTIONS_PATH = '/api/integrations/slack/{channelId}/interactions';

/**
 * The URL of `path` on PUBLIC_BASE_URL with its `{parameters}` filled in (each encoded); `query` is
 * appended as given (`?token=…`, or the one-click link's `?api_key={API_KEY}` placeholder).
 */
export function link(path: string, params: Record<string, string>, query = ''): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`link ${path}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  return `${config().PUBLIC_BASE_URL.replace(/\/+$/, '')}${filled}${query}`;
}
