import type { ChannelType } from '../db/channel-types.ts';
import { email, emailKind } from './email.ts';
import { slack, slackKind } from './slack.ts';
import { teams, teamsKind } from './teams.ts';
import type { ChannelAdapter, ChannelKind } from './types.ts';

/*
 * The approval channels by kind. Adding a kind: its module (`./<kind>.ts`, exporting its
 * `ChannelKind` and its `ChannelAdapter`), its name in CHANNEL_TYPES (shared/db/channel-types.ts)
 * and its entry in both maps below; the types fail to compile until the three agree.
 */

/** What each kind is (settings, masks, view): for the channel routes and the definition checks, without the providers' clients. */
export const channelKinds: { readonly [T in ChannelType]: ChannelKind<T> } = { slack: slackKind, email: emailKind, teams: teamsKind };

/** How each kind sends: for the notifications worker, test messages and Slack's interactions. */
export const adapters: { readonly [T in ChannelType]: ChannelAdapter<T> } = { slack, email, teams };
