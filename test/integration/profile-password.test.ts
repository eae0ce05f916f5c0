import { describe, expect, it } from 'vitest';
import { handler as password } from '../../functions/http/auth/password.ts';
import { handler as profile } from '../../functions/http/auth/profile.ts';
import { handler as listMembers } from '../../functions/http/members/list.ts';
import { onceForForm } from '../../shared/domain/form-once.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/** My own profile and password through the API (`PUT /api/auth/me`, `POST /api/auth/password`), and a console form done once. */

const setSlack = (token: string, slackUserId: unknown) =>
  invoke(profile, apiEvent({ method: 'PUT', path: '/api/auth/me', headers: bearer(token), body: { slackUserId } }));
const changePassword = (token: string, body: Record<string, unknown>) =>
  invoke(password, apiEvent({ method: 'POST', path: '/api/auth/password', headers: bearer(token), body }));

describe('my profile', () => {
  it('a member sets and removes their own Slack user id; one already another member’s is refused (409)', async () => {
    const a = await givenAccount();
    const [memberToken, adminToken] = await Promise.all([sessionOf(a.member.email), sessionOf(a.admin.email)]);
    const set = await setSlack(memberToken, 'U0MEMBER1');
    expect(set.status, set.body).toBe(200);
    expect(set.json).toMatchObject({ id: a.member.userId, slackUserId: 'U0MEMBER1', role: 'member' });
    expectProblem(await setSlack(adminToken, 'U0MEMBER1'), 409, 'SLACK_USER_TAKEN');
    const bad = await setSlack(memberToken, 'nope');
    expectProblem(bad, 400, 'VALIDATION_FAILED');
    expect(bad.json.errors).toEqual([{ path: 'slackUserId', message: 'must be a Slack user id (U…)' }]);
    expectProblem(await setSlack(memberToken, undefined), 400, 'VALIDATION_FAILED');
    expect((await setSlack(memberToken, null)).json.slackUserId).toBeUndefined();
    const list = await invoke(listMembers, apiEvent({ path: '/api/members', headers: bearer(adminToken) }));
    expect(list.json.items.find((u: { id: string }) => u.id === a.member.userId).slackUserId).toBeUndefined();
    // Now free: the admin may take it.
    expect((await setSlack(adminToken, 'U0MEMBER1')).status).toBe(200);
  });
});

describe('my password', () => {
  it('needs the current one (400 at currentPassword), a valid new one (400 at newPassword); then only the new one signs in', async () => {
    const a = await givenAccount();
    const token = await sessionOf(a.member.email);
    const wrong = await changePassword(token, { currentPassword: 'not it at all', newPassword: 'a new password 123' });
    expectProblem(wrong, 400, 'VALIDATION_FAILED');
    expect(wrong.json.errors).toEqual([{ path: 'currentPassword', message: 'is not your current password' }]);
    const short = await changePassword(token, { currentPassword: PASSWORD, newPassword: 'short' });
    expectProblem(short, 400, 'VALIDATION_FAILED');
    expect(short.json.errors).toEqual([{ path: 'newPassword', message: 'at least 10 characters' }]);
    await sessionOf(a.member.email, PASSWORD);
    const done = await changePassword(token, { currentPassword: PASSWORD, newPassword: 'a new password 123' });
    expect(done.status, done.body).toBe(204);
    await sessionOf(a.member.email, 'a new password 123');
    expectProblem(await changePassword(token, { currentPassword: PASSWORD, newPassword: 'another one 1234' }), 400, 'VALIDATION_FAILED');
  });
});

describe('a console form done once', () => {
  it('acts once per form id and session; a failure gives the id back; a malformed id is refused before anything', async () => {
    const p = { kind: 'session' as const, accountId: 'acc_x', userId: 'usr_x', role: 'admin' as const, sessionId: `s${Date.now()}` };
    const formId = crypto.randomUUID();
    let acted = 0;
    await expect(onceForForm(p, formId, async () => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
    expect(await onceForForm(p, formId, async () => ++acted)).toBe(1);
    await expect(onceForForm(p, formId, async () => ++acted)).rejects.toMatchObject({ code: 'FORM_ALREADY_SENT' });
    // Another session's use of the same id is its own.
    expect(await onceForForm({ ...p, sessionId: `${p.sessionId}b` }, formId, async () => ++acted)).toBe(2);
    await expect(onceForForm(p, 'not-a-uuid', async () => ++acted)).rejects.toMatchObject({ code: 'INVALID_FORM_ID' });
    expect(acted).toBe(2);
  });
});
