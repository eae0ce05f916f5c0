// The console's forms that handle secrets: account secrets and channel credentials, sealed and opened with
// the secrets key (KMS), and a channel's test message; one Lambda (functions/route-kinds.ts
// CONSOLE_FUNCTIONS), the only console function that may use the key or send mail.
import { consoleRouter } from './router.ts';
import { handler as settingsSecretsCreate } from './settings/secrets/create.ts';
import { handler as settingsSecretsAction } from './settings/secrets/action.ts';
import { handler as settingsChannelsCreate } from './settings/channels/create.ts';
import { handler as settingsChannelsAction } from './settings/channels/action.ts';

export const handler = consoleRouter([settingsSecretsCreate, settingsSecretsAction, settingsChannelsCreate, settingsChannelsAction]);
