// The console's forms that change things (sign-in and out, run actions, decisions, workflows, keys,
// members, account, webhooks, schedules), one Lambda (functions/route-kinds.ts CONSOLE_FUNCTIONS): its role
// reads and writes the table, sends to the runs and notifications queues, manages the stack's schedules,
// and reads and writes the artifacts bucket (a webhook request's replay, as the trigger: a large payload);
// 1,024 MB, as sign-in and password changes hash with scrypt (128 MiB a hash).
import { consoleRouter } from './router.ts';
import { handler as loginSignIn } from './login/sign-in.ts';
import { handler as logoutSignOut } from './logout/sign-out.ts';
import { handler as runsAction } from './runs/action.ts';
import { handler as runsRedeliver } from './runs/redeliver.ts';
import { handler as approvalsDecide } from './approvals/decide.ts';
import { handler as approvalsDecideMany } from './approvals/decide-many.ts';
import { handler as workflowsCreate } from './workflows/create.ts';
import { handler as workflowsSave } from './workflows/save.ts';
import { handler as workflowsValidate } from './workflows/validate.ts';
import { handler as workflowsRestore } from './workflows/restore.ts';
import { handler as settingsKeysCreate } from './settings/keys/create.ts';
import { handler as settingsKeysRevoke } from './settings/keys/revoke.ts';
import { handler as settingsMembersCreate } from './settings/members/create.ts';
import { handler as settingsMembersAction } from './settings/members/action.ts';
import { handler as settingsAccountProfile } from './settings/account/profile.ts';
import { handler as settingsAccountPassword } from './settings/account/password.ts';
import { handler as settingsAccountSignOut } from './settings/account/sign-out.ts';
import { handler as webhooksCreate } from './webhooks/create.ts';
import { handler as webhooksAction } from './webhooks/action.ts';
import { handler as webhooksReplay } from './webhooks/replay.ts';
import { handler as schedulesCreate } from './schedules/create.ts';
import { handler as schedulesAction } from './schedules/action.ts';
import { handler as settingsChannelsRedeliver } from './settings/channels/redeliver.ts';
import { handler as workflowsStart } from './workflows/start.ts';
import { handler as workflowsTestRun } from './workflows/test-run.ts';

export const handler = consoleRouter([
  loginSignIn,
  logoutSignOut,
  runsAction,
  runsRedeliver,
  approvalsDecide,
  approvalsDecideMany,
  workflowsCreate,
  workflowsSave,
  workflowsValidate,
  workflowsRestore,
  settingsKeysCreate,
  settingsKeysRevoke,
  settingsMembersCreate,
  settingsMembersAction,
  settingsAccountProfile,
  settingsAccountPassword,
  settingsAccountSignOut,
  webhooksCreate,
  webhooksAction,
  webhooksReplay,
  schedulesCreate,
  schedulesAction,
  settingsChannelsRedeliver,
  workflowsStart,
  workflowsTestRun,
]);
