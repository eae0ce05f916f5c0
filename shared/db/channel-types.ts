import * as z from 'zod';

/**
 * The kinds of approval channel, listed once. Each kind is an adapter (shared/channels/<kind>.ts,
 * registered in shared/channels/index.ts); entities, request schemas, review links and views read
 * this list and name no kind themselves (test/unit/channel-registry.test.ts keeps it so).
 */
export const CHANNEL_TYPES = ['slack', 'email', 'teams'] as const;
export const ChannelType = z.enum(CHANNEL_TYPES);
export type ChannelType = z.infer<typeof ChannelType>;
