import type { ChannelType } from '../db/channel-types.ts';
import { email } from './email.ts';
import { slack } from './slack.ts';
import { teams } from './teams.ts';
import type { ChannelAdapter } from './types.ts';

/**
 * The approval channels' adapters by kind. Adding a kind: its module (`./<kind>.ts`, a
 * `ChannelAdapter`), its name in CHANNEL_TYPES (shared/db/channel-types.ts) and a line here; the
 * type below fails to compile until both agree.
 */
export const adapters: { readonly [T in ChannelType]: ChannelAdapter<T> } = { slack, email, teams };
