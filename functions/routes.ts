import type { Route } from '../shared/http/route.ts';
import { route as healthGet } from './http/health/get.route.ts';
import { route as v1Openapi } from './http/v1/openapi.route.ts';
import { route as authLogin } from './http/auth/login.route.ts';
import { route as authLogout } from './http/auth/logout.route.ts';
import { route as authLogoutEverywhere } from './http/auth/logout-everywhere.route.ts';
import { route as authMe } from './http/auth/me.route.ts';
import { route as membersList } from './http/members/list.route.ts';
import { route as membersCreate } from './http/members/create.route.ts';
import { route as membersUpdate } from './http/members/update.route.ts';
import { route as membersRemove } from './http/members/remove.route.ts';
import { route as secretsList } from './http/secrets/list.route.ts';
import { route as secretsCreate } from './http/secrets/create.route.ts';
import { route as secretsUpdate } from './http/secrets/update.route.ts';
import { route as secretsDelete } from './http/secrets/delete.route.ts';
import { route as keysList } from './http/keys/list.route.ts';
import { route as keysCreate } from './http/keys/create.route.ts';
import { route as keysRevoke } from './http/keys/revoke.route.ts';
import { route as workflowsList } from './http/workflows/list.route.ts';
import { route as workflowsCreate } from './http/workflows/create.route.ts';
import { route as workflowsGet } from './http/workflows/get.route.ts';
import { route as workflowsUpdate } from './http/workflows/update.route.ts';
import { route as workflowsDelete } from './http/workflows/delete.route.ts';
import { route as v1WorkflowsList } from './http/v1/workflows/list.route.ts';
import { route as v1WorkflowsGet } from './http/v1/workflows/get.route.ts';
import { route as v1WorkflowsStartRun } from './http/v1/workflows/start-run.route.ts';
import { route as v1ExecutionsList } from './http/v1/executions/list.route.ts';
import { route as v1ExecutionsGet } from './http/v1/executions/get.route.ts';
import { route as v1ExecutionsResult } from './http/v1/executions/result.route.ts';
import { route as v1ExecutionsEvents } from './http/v1/executions/events.route.ts';
import { route as v1ExecutionsCancel } from './http/v1/executions/cancel.route.ts';
import { route as v1ExecutionsResume } from './http/v1/executions/resume.route.ts';
import { route as v1ExecutionsRerun } from './http/v1/executions/rerun.route.ts';
import { route as v1ExecutionsRetry } from './http/v1/executions/retry.route.ts';
import { route as v1ArtifactsList } from './http/v1/artifacts/list.route.ts';
import { route as v1ArtifactsDownload } from './http/v1/artifacts/download.route.ts';
import { route as webhooksCreate } from './http/webhooks/create.route.ts';
import { route as webhooksList } from './http/webhooks/list.route.ts';
import { route as webhooksGet } from './http/webhooks/get.route.ts';
import { route as webhooksUpdate } from './http/webhooks/update.route.ts';
import { route as webhooksDelete } from './http/webhooks/delete.route.ts';
import { route as webhooksStats } from './http/webhooks/stats.route.ts';
import { route as webhooksTrigger } from './http/webhooks/trigger.route.ts';
import { route as webhooksTriggerLegacy } from './http/webhooks/trigger-legacy.route.ts';
import { route as approvalsDecide } from './http/approvals/decide.route.ts';
import { route as approvalsLink } from './http/approvals/link.route.ts';
import { route as approvalsLinkHead } from './http/approvals/link-head.route.ts';
import { route as approvalsLinkConfirm } from './http/approvals/link-confirm.route.ts';
import { route as v1ApprovalsList } from './http/v1/approvals/list.route.ts';
import { route as v1ApprovalsGet } from './http/v1/approvals/get.route.ts';
import { route as v1ApprovalsApprove } from './http/v1/approvals/approve.route.ts';
import { route as v1ApprovalsReject } from './http/v1/approvals/reject.route.ts';
import { route as v1Me } from './http/v1/me.route.ts';
import { route as channelsCreate } from './http/channels/create.route.ts';
import { route as channelsList } from './http/channels/list.route.ts';
import { route as channelsGet } from './http/channels/get.route.ts';
import { route as channelsUpdate } from './http/channels/update.route.ts';
import { route as channelsDelete } from './http/channels/delete.route.ts';
import { route as channelsTest } from './http/channels/test.route.ts';
import { route as slackInteractions } from './http/integrations/slack-interactions.route.ts';
import { route as reviewsPage } from './http/reviews/page.route.ts';
import { route as reviewsHead } from './http/reviews/head.route.ts';
import { route as reviewsDecide } from './http/reviews/decide.route.ts';
import { route as v1ExecutionsDeliveries } from './http/v1/executions/deliveries.route.ts';
import { route as v1ApprovalsDeliveries } from './http/v1/approvals/deliveries.route.ts';
import { route as deliveriesRedeliver } from './http/deliveries/redeliver.route.ts';
import { route as v1CallbacksReport } from './http/v1/callbacks/report.route.ts';
import { route as v1CallbacksHeartbeat } from './http/v1/callbacks/heartbeat.route.ts';
import { route as schedulesCreate } from './http/schedules/create.route.ts';
import { route as schedulesList } from './http/schedules/list.route.ts';
import { route as schedulesGet } from './http/schedules/get.route.ts';
import { route as schedulesUpdate } from './http/schedules/update.route.ts';
import { route as schedulesDelete } from './http/schedules/delete.route.ts';
import { route as schedulesRun } from './http/schedules/run.route.ts';
import { route as schedulesEvents } from './http/schedules/events.route.ts';
import { route as workflowsVersions } from './http/workflows/versions.route.ts';
import { route as workflowsVersion } from './http/workflows/version.route.ts';
import { route as authProfile } from './http/auth/profile.route.ts';
import { route as authPassword } from './http/auth/password.route.ts';
import { route as auditList } from './http/audit/list.route.ts';
import { route as auditExport } from './http/audit/export.route.ts';
import { codeRoutes } from './code-routes.ts';
import { consoleRoutes } from './console-routes.ts';
import { inboundRoutes } from './inbound-routes.ts';

/**
 * Every HTTP route of the service, one module each (`functions/<area>/<action>.route.ts`: method, path,
 * auth, grants, schemas, limits). The CDK stack makes one Lambda per handler module (infra/route-functions.ts):
 * one per API route, three for the console's pages (`CONSOLE_FUNCTIONS`, each a router over its pages);
 * the local server mounts the same handlers and the OpenAPI document is generated from this list. Order
 * does not matter: where a route is deployed is pinned by name (infra/constructs/placement.ts). A handler
 * imports only its own route module, never this list, so its bundle holds its own schemas and nothing
 * of the other routes (a console function: its pages').
 */
export const routes = [
  healthGet,
  v1Openapi,
  authLogin,
  authLogout,
  authLogoutEverywhere,
  authMe,
  membersList,
  membersCreate,
  membersUpdate,
  membersRemove,
  secretsList,
  secretsCreate,
  secretsUpdate,
  secretsDelete,
  keysList,
  keysCreate,
  keysRevoke,
  workflowsList,
  workflowsCreate,
  workflowsGet,
  workflowsUpdate,
  workflowsDelete,
  v1WorkflowsList,
  v1WorkflowsGet,
  v1WorkflowsStartRun,
  v1ExecutionsList,
  v1ExecutionsGet,
  v1ExecutionsResult,
  v1ExecutionsEvents,
  v1ExecutionsCancel,
  v1ExecutionsResume,
  v1ExecutionsRerun,
  v1ExecutionsRetry,
  v1ArtifactsList,
  v1ArtifactsDownload,
  webhooksCreate,
  webhooksList,
  webhooksGet,
  webhooksUpdate,
  webhooksDelete,
  webhooksStats,
  webhooksTrigger,
  webhooksTriggerLegacy,
  approvalsDecide,
  approvalsLink,
  approvalsLinkHead,
  approvalsLinkConfirm,
  v1ApprovalsList,
  v1ApprovalsGet,
  v1ApprovalsApprove,
  v1ApprovalsReject,
  v1Me,
  channelsCreate,
  channelsList,
  channelsGet,
  channelsUpdate,
  channelsDelete,
  channelsTest,
  slackInteractions,
  reviewsPage,
  reviewsHead,
  reviewsDecide,
  v1ExecutionsDeliveries,
  v1ApprovalsDeliveries,
  deliveriesRedeliver,
  v1CallbacksReport,
  v1CallbacksHeartbeat,
  schedulesCreate,
  schedulesList,
  schedulesGet,
  schedulesUpdate,
  schedulesDelete,
  schedulesRun,
  schedulesEvents,
  ...consoleRoutes,
  workflowsVersions,
  workflowsVersion,
  authProfile,
  authPassword,
  auditList,
  auditExport,
  ...codeRoutes,
  ...inboundRoutes,
] as const satisfies readonly Route[];
