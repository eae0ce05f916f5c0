// The console's pages that only read: every GET page, one Lambda (functions/route-kinds.ts CONSOLE_FUNCTIONS).
// Its role reads the table and signs list cursors, reads artifacts (a run's downloads, a webhook request's large payload) and counts failed
// sign-ins by address; it writes nothing else. Each page is its route, its loader and its view beside it.
import { consoleRouter } from './router.ts';
import { handler as loginPage } from './login/page.ts';
import { handler as overview } from './overview.ts';
import { handler as assetsAsset } from './assets/asset.ts';
import { handler as workflowsList } from './workflows/list.ts';
import { handler as workflowsWorkflow } from './workflows/workflow.ts';
import { handler as runsRun } from './runs/run.ts';
import { handler as runsValue } from './runs/value.ts';
import { handler as runsStepValue } from './runs/step-value.ts';
import { handler as runsConfirm } from './runs/confirm.ts';
import { handler as runsArtifact } from './runs/artifact.ts';
import { handler as runsList } from './runs/list.ts';
import { handler as approvalsList } from './approvals/list.ts';
import { handler as approvalsApproval } from './approvals/approval.ts';
import { handler as workflowsNew } from './workflows/new.ts';
import { handler as workflowsEdit } from './workflows/edit.ts';
import { handler as workflowsVersions } from './workflows/versions.ts';
import { handler as workflowsRestoreConfirm } from './workflows/restore-confirm.ts';
import { handler as settingsKeysList } from './settings/keys/list.ts';
import { handler as settingsKeysNew } from './settings/keys/new.ts';
import { handler as settingsKeysRevokeConfirm } from './settings/keys/revoke-confirm.ts';
import { handler as settingsMembersList } from './settings/members/list.ts';
import { handler as settingsMembersNew } from './settings/members/new.ts';
import { handler as settingsMembersConfirm } from './settings/members/confirm.ts';
import { handler as settingsAccountAccount } from './settings/account/account.ts';
import { handler as webhooksList } from './webhooks/list.ts';
import { handler as webhooksNew } from './webhooks/new.ts';
import { handler as webhooksWebhook } from './webhooks/webhook.ts';
import { handler as webhooksPage } from './webhooks/page.ts';
import { handler as webhooksRequests } from './webhooks/requests.ts';
import { handler as webhooksRequest } from './webhooks/request.ts';
import { handler as schedulesList } from './schedules/list.ts';
import { handler as schedulesNew } from './schedules/new.ts';
import { handler as schedulesPreview } from './schedules/preview.ts';
import { handler as schedulesConfirm } from './schedules/confirm.ts';
import { handler as settingsSecretsList } from './settings/secrets/list.ts';
import { handler as settingsSecretsNew } from './settings/secrets/new.ts';
import { handler as settingsSecretsPage } from './settings/secrets/page.ts';
import { handler as settingsChannelsList } from './settings/channels/list.ts';
import { handler as settingsChannelsNew } from './settings/channels/new.ts';
import { handler as settingsChannelsChannel } from './settings/channels/channel.ts';
import { handler as settingsChannelsConfirm } from './settings/channels/confirm.ts';
import { handler as settingsAuditList } from './settings/audit/list.ts';
import { handler as settingsAuditExport } from './settings/audit/export.ts';
import { handler as workflowsRun } from './workflows/run.ts';

export const handler = consoleRouter([
  loginPage,
  overview,
  assetsAsset,
  workflowsList,
  workflowsWorkflow,
  runsRun,
  runsValue,
  runsStepValue,
  runsConfirm,
  runsArtifact,
  runsList,
  approvalsList,
  approvalsApproval,
  workflowsNew,
  workflowsEdit,
  workflowsVersions,
  workflowsRestoreConfirm,
  settingsKeysList,
  settingsKeysNew,
  settingsKeysRevokeConfirm,
  settingsMembersList,
  settingsMembersNew,
  settingsMembersConfirm,
  settingsAccountAccount,
  webhooksList,
  webhooksNew,
  webhooksWebhook,
  webhooksPage,
  webhooksRequests,
  webhooksRequest,
  schedulesList,
  schedulesNew,
  schedulesPreview,
  schedulesConfirm,
  settingsSecretsList,
  settingsSecretsNew,
  settingsSecretsPage,
  settingsChannelsList,
  settingsChannelsNew,
  settingsChannelsChannel,
  settingsChannelsConfirm,
  settingsAuditList,
  settingsAuditExport,
  workflowsRun,
]);
