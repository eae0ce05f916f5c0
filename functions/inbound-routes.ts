import type { Route } from '../shared/http/route.ts';
import { route as webhookRequests } from './http/webhooks/requests.route.ts';
import { route as webhookRequest } from './http/webhooks/request.route.ts';
import { route as webhookReplay } from './http/webhooks/replay.route.ts';

/** A webhook's inbound log (docs/webhooks.md "Why was my request refused?"): its requests, one, a replay; after the code routes. */
export const inboundRoutes = [webhookRequests, webhookRequest, webhookReplay] as const satisfies readonly Route[];
