// The deployed functions' AWS credentials: those Lambda puts in the environment, and no other source
// (see ../bundling.ts, ALIASES). Replaces `@aws-sdk/credential-provider-node` in the bundles only.
import { fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
