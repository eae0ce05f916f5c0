import * as z from 'zod';
import { Plan } from '../config.ts';
import { Role } from '../db/entities/user.ts';
import { Scope } from '../db/entities/api-key.ts';
import { idOf } from './common.ts';
import { USER_ID } from '../ids.ts';

export const Email = z.email().max(254);
export const Password = z.string().min(10, 'at least 10 characters').max(256);

export const LoginBody = z.object({ email: z.string().max(254), password: z.string().max(256) });

export const UserView = z.object({
  id: z.string(),
  email: z.string(),
  role: Role,
  disabled: z.boolean(),
  createdAt: z.number(),
  slackUserId: z.string().optional().describe('Their Slack user id, when recorded (`PUT /api/members/{id}`).'),
});

export const Me = z.object({
  user: UserView.pick({ id: true, email: true, role: true }),
  account: z.object({ id: z.string(), name: z.string(), plan: Plan }),
});

export const LoginResult = z.object({ token: z.string(), expiresAt: z.number(), user: Me.shape.user });

const SlackUserId = z.string().regex(/^[UW][A-Z0-9]{2,20}$/, 'must be a Slack user id (U…)');
export const CreateMemberBody = z.object({
  email: Email,
  password: Password,
  role: Role.default('member'),
  slackUserId: SlackUserId.optional().describe('Their Slack user id (see `PUT /api/members/{id}`); one member per id in the account.'),
});
export const MemberParams = z.object({ id: idOf('MEMBER_NOT_FOUND', 'Member', { pattern: USER_ID }) });
export const UpdateMemberBody = z
  .strictObject({
    role: Role.optional(),
    disabled: z.boolean().optional(),
    slackUserId: SlackUserId.nullable()
      .optional()
      .describe(
        'Their Slack user id: Slack approval messages reach them by it, and their Slack clicks map to them. null removes it. Without one, their email is looked up in Slack. One member per id in the account (409 `SLACK_USER_TAKEN`).',
      ),
    restoreKeys: z
      .boolean()
      .optional()
      .describe(
        'With `disabled: false`: the member’s unrevoked keys work again. Without it a re-enabled member’s keys stay suspended; their old sessions never come back.',
      ),
  })
  .refine(
    (b) => b.role !== undefined || b.disabled !== undefined || b.slackUserId !== undefined,
    'Send role, disabled, slackUserId or several.',
  )
  .refine((b) => !b.restoreKeys || b.disabled === false, { message: 'restoreKeys goes with disabled: false', path: ['restoreKeys'] });
/** The caller's own profile (`PUT /api/auth/me`). */
export const UpdateProfileBody = z.strictObject({
  slackUserId: SlackUserId.nullable().describe('Your Slack user id (U…); null removes it. One member per id in the account.'),
});
export const ChangePasswordBody = z.object({
  currentPassword: z.string().min(1, 'enter your current password').max(256),
  newPassword: Password,
});
export const MemberList = z.object({ items: z.array(UserView), nextCursor: z.null() });

export const CreateKeyBody = z.object({
  name: z.string().trim().min(1).max(100),
  scopes: z.array(Scope).min(1).max(Scope.options.length),
  validityDays: z.number().int().min(1).max(365),
});

export const KeyView = z.object({
  id: z.string(),
  name: z.string(),
  ownerId: z.string(),
  scopes: z.array(Scope),
  createdAt: z.number(),
  expiresAt: z.number(),
  revokedAt: z.number().nullable(),
  status: z
    .enum(['active', 'expired', 'revoked', 'suspended'])
    .describe('suspended: the owner was disabled since the key was made (until an admin re-enables them with restoreKeys)'),
  usage: z.object({ total: z.number(), today: z.number(), lastUsedAt: z.number().nullable() }),
});
export const KeyCreated = KeyView.extend({ token: z.string().describe('Shown this once.') });
export const KeyList = z.object({ items: z.array(KeyView), nextCursor: z.null() });
export const KeyListQuery = z.object({ all: z.stringbool().optional() });
export const KeyParams = z.object({ id: idOf('KEY_NOT_FOUND', 'API key', { pattern: /^[0-9a-z]{26}$/ }) });

export const V1Me = z.object({
  accountId: z.string(),
  userId: z.string(),
  keyId: z.string(),
  scopes: z.array(Scope),
  plan: Plan,
});
