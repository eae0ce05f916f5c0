import { email } from './email.ts';
import { slack } from './slack.ts';
import { teams } from './teams.ts';
import type { ChannelAdapter, OpenChannel } from './types.ts';

/** The approval channels by type: adding one is a module and a line here. */
export const adapters: Record<OpenChannel['type'], ChannelAdapter> = { slack, email, teams };

export type { ApprovalCard, ChannelAdapter, MessageRef, OpenChannel, SendResult } from './types.ts';
