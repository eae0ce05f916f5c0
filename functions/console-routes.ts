import type { Route } from '../shared/http/route.ts';
import { route as consoleLoginPage } from './http/console/login/page.route.ts';
import { route as consoleLogin } from './http/console/login/sign-in.route.ts';
import { route as consoleLogout } from './http/console/logout/sign-out.route.ts';
import { route as consoleOverview } from './http/console/overview.route.ts';
import { route as consoleAssets } from './http/console/assets/asset.route.ts';
import { route as consoleWorkflows } from './http/console/workflows/list.route.ts';
import { route as consoleWorkflow } from './http/console/workflows/workflow.route.ts';
import { route as consoleRun } from './http/console/runs/run.route.ts';
import { route as consoleRunValue } from './http/console/runs/value.route.ts';
import { route as consoleRunStepValue } from './http/console/runs/step-value.route.ts';
import { route as consoleRunConfirm } from './http/console/runs/confirm.route.ts';
import { route as consoleRunAction } from './http/console/runs/action.route.ts';
import { route as consoleRunArtifact } from './http/console/runs/artifact.route.ts';
import { route as consoleRunRedeliver } from './http/console/runs/redeliver.route.ts';
import { route as consoleRuns } from './http/console/runs/list.route.ts';
import { route as consoleApprovals } from './http/console/approvals/list.route.ts';
import { route as consoleApproval } from './http/console/approvals/approval.route.ts';
import { route as consoleApprovalDecide } from './http/console/approvals/decide.route.ts';
import { route as consoleApprovalsDecide } from './http/console/approvals/decide-many.route.ts';
import { route as consoleWorkflowNew } from './http/console/workflows/new.route.ts';
import { route as consoleWorkflowCreate } from './http/console/workflows/create.route.ts';
import { route as consoleWorkflowEdit } from './http/console/workflows/edit.route.ts';
import { route as consoleWorkflowSave } from './http/console/workflows/save.route.ts';
import { route as consoleWorkflowValidate } from './http/console/workflows/validate.route.ts';
import { route as consoleWorkflowVersions } from './http/console/workflows/versions.route.ts';
import { route as consoleWorkflowRestoreConfirm } from './http/console/workflows/restore-confirm.route.ts';
import { route as consoleWorkflowRestore } from './http/console/workflows/restore.route.ts';
import { route as consoleKeys } from './http/console/settings/keys/list.route.ts';
import { route as consoleKeyNew } from './http/console/settings/keys/new.route.ts';
import { route as consoleKeyCreate } from './http/console/settings/keys/create.route.ts';
import { route as consoleKeyRevokeConfirm } from './http/console/settings/keys/revoke-confirm.route.ts';
import { route as consoleKeyRevoke } from './http/console/settings/keys/revoke.route.ts';
import { route as consoleMembers } from './http/console/settings/members/list.route.ts';
import { route as consoleMemberNew } from './http/console/settings/members/new.route.ts';
import { route as consoleMemberCreate } from './http/console/settings/members/create.route.ts';
import { route as consoleMemberConfirm } from './http/console/settings/members/confirm.route.ts';
import { route as consoleMemberAction } from './http/console/settings/members/action.route.ts';
import { route as consoleAccount } from './http/console/settings/account/account.route.ts';
import { route as consoleAccountProfile } from './http/console/settings/account/profile.route.ts';
import { route as consoleAccountPassword } from './http/console/settings/account/password.route.ts';
import { route as consoleAccountSignOut } from './http/console/settings/account/sign-out.route.ts';
import { route as consoleWebhooks } from './http/console/webhooks/list.route.ts';
import { route as consoleWebhookNew } from './http/console/webhooks/new.route.ts';
import { route as consoleWebhookCreate } from './http/console/webhooks/create.route.ts';
import { route as consoleWebhook } from './http/console/webhooks/webhook.route.ts';
import { route as consoleWebhookPage } from './http/console/webhooks/page.route.ts';
import { route as consoleWebhookAction } from './http/console/webhooks/action.route.ts';
import { route as consoleWebhookRequests } from './http/console/webhooks/requests.route.ts';
import { route as consoleWebhookRequest } from './http/console/webhooks/request.route.ts';
import { route as consoleWebhookReplay } from './http/console/webhooks/replay.route.ts';
import { route as consoleSchedules } from './http/console/schedules/list.route.ts';
import { route as consoleScheduleNew } from './http/console/schedules/new.route.ts';
import { route as consoleScheduleCreate } from './http/console/schedules/create.route.ts';
import { route as consoleSchedulePreview } from './http/console/schedules/preview.route.ts';
import { route as consoleScheduleConfirm } from './http/console/schedules/confirm.route.ts';
import { route as consoleScheduleAction } from './http/console/schedules/action.route.ts';
import { route as consoleSecrets } from './http/console/settings/secrets/list.route.ts';
import { route as consoleSecretNew } from './http/console/settings/secrets/new.route.ts';
import { route as consoleSecretCreate } from './http/console/settings/secrets/create.route.ts';
import { route as consoleSecretPage } from './http/console/settings/secrets/page.route.ts';
import { route as consoleSecretAction } from './http/console/settings/secrets/action.route.ts';
import { route as consoleChannels } from './http/console/settings/channels/list.route.ts';
import { route as consoleChannelNew } from './http/console/settings/channels/new.route.ts';
import { route as consoleChannelCreate } from './http/console/settings/channels/create.route.ts';
import { route as consoleChannel } from './http/console/settings/channels/channel.route.ts';
import { route as consoleChannelConfirm } from './http/console/settings/channels/confirm.route.ts';
import { route as consoleChannelAction } from './http/console/settings/channels/action.route.ts';
import { route as consoleChannelRedeliver } from './http/console/settings/channels/redeliver.route.ts';
import { route as consoleAudit } from './http/console/settings/audit/list.route.ts';
import { route as consoleAuditExport } from './http/console/settings/audit/export.route.ts';
import { route as consoleWorkflowRun } from './http/console/workflows/run.route.ts';
import { route as consoleWorkflowStart } from './http/console/workflows/start.route.ts';
import { route as consoleWorkflowTest } from './http/console/workflows/test-run.route.ts';

/** The console's pages (docs/console.md), in the route table's order: three functions serve them (`CONSOLE_FUNCTIONS`). */
export const consoleRoutes = [
  consoleLoginPage,
  consoleLogin,
  consoleLogout,
  consoleOverview,
  consoleAssets,
  consoleWorkflows,
  consoleWorkflow,
  consoleRun,
  consoleRunValue,
  consoleRunStepValue,
  consoleRunConfirm,
  consoleRunAction,
  consoleRunArtifact,
  consoleRunRedeliver,
  consoleRuns,
  consoleApprovals,
  consoleApproval,
  consoleApprovalDecide,
  consoleApprovalsDecide,
  consoleWorkflowNew,
  consoleWorkflowCreate,
  consoleWorkflowEdit,
  consoleWorkflowSave,
  consoleWorkflowValidate,
  consoleWorkflowVersions,
  consoleWorkflowRestoreConfirm,
  consoleWorkflowRestore,
  consoleKeys,
  consoleKeyNew,
  consoleKeyCreate,
  consoleKeyRevokeConfirm,
  consoleKeyRevoke,
  consoleMembers,
  consoleMemberNew,
  consoleMemberCreate,
  consoleMemberConfirm,
  consoleMemberAction,
  consoleAccount,
  consoleAccountProfile,
  consoleAccountPassword,
  consoleAccountSignOut,
  consoleWebhooks,
  consoleWebhookNew,
  consoleWebhookCreate,
  consoleWebhook,
  consoleWebhookPage,
  consoleWebhookAction,
  consoleWebhookRequests,
  consoleWebhookRequest,
  consoleWebhookReplay,
  consoleSchedules,
  consoleScheduleNew,
  consoleScheduleCreate,
  consoleSchedulePreview,
  consoleScheduleConfirm,
  consoleScheduleAction,
  consoleSecrets,
  consoleSecretNew,
  consoleSecretCreate,
  consoleSecretPage,
  consoleSecretAction,
  consoleChannels,
  consoleChannelNew,
  consoleChannelCreate,
  consoleChannel,
  consoleChannelConfirm,
  consoleChannelAction,
  consoleChannelRedeliver,
  consoleAudit,
  consoleAuditExport,
  consoleWorkflowRun,
  consoleWorkflowStart,
  consoleWorkflowTest,
] as const satisfies readonly Route[];
