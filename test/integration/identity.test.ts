import { randomBytes, scryptSync } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as logout } from '../../functions/http/auth/logout.ts';
import { handler as me } from '../../functions/http/auth/me.ts';
import { handler as createMember } from '../../functions/http/members/create.ts';
import { handler as listMembers } from '../../functions/http/members/list.ts';
import { db, tableName } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { putSession } from '../../shared/db/entities/session.ts';
import { LOGIN_LIMITS } from '../../shared/domain/sessions.ts';
import { hashToken, mintToken } from '../../shared/tokens.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';

const randomIp = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
const loginAs = (email: string, password = PASSWORD, sourceIp = randomIp()) =>
  invoke(login, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password }, sourceIp }));

describe('console login', () => {
  it('issues a session token that identifies the user and account', async () => {
    const { admin, account } = await givenAccount();
    const res = await loginAs(admin.email);
    expect(res.status).toBe(200);
    expect(res.json.token).toMatch(/^dys_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
    expect(res.json.expiresAt).toBeGreaterThan(Date.now() + 11 * 3_600_000);
    const who = await invoke(me, apiEvent({ path: '/api/auth/me', headers: bearer(res.json.token) }));
    expect(who.json).toEqual({
      user: { id: admin.userId, email: admin.email, role: 'admin' },
      account: { id: account.accountId, name: 'Test', plan: 'team' },
    });
  });

  it('answers an unknown email exactly like a wrong password', async () => {
    const { admin } = await givenAccount();
    const wrong = await loginAs(admin.email, 'not the password');
    const unknown = await loginAs(uniqueEmail('ghost'), 'not the password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const strip = (j: Record<string, unknown>) => ({ ...j, requestId: undefined });
    expect(strip(unknown.json)).toEqual(strip(wrong.json));
    expect(wrong.headers['www-authenticate']).toBe('Bearer');
  });

  it('stores only a scrypt hash of the password and a hash of the session token', async () => {
    const { admin } = await givenAccount();
    const { Item: user } = await db().send(
      new GetCommand({ TableName: tableName(), Key: { PK: `ACC#${admin.accountId}`, SK: `USER#${admin.userId}` } }),
    );
    expect(user?.passwordHash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(user)).not.toContain(PASSWORD);
    const res = await loginAs(admin.email);
    const sessionId = res.json.token.split('_')[1];
    const { Item: session } = await db().send(
      new GetCommand({ TableName: tableName(), Key: { PK: `SESSION#${sessionId}`, SK: 'SESSION' } }),
    );
    expect(session?.tokenHash).toBe(hashToken(res.json.token));
    expect(JSON.stringify(session)).not.toContain(res.json.token);
  });

  it('limits failed attempts per email and address, even with the right password after the limit', async () => {
    const { admin } = await givenAccount();
    const ip = randomIp();
    for (let i = 0; i < LOGIN_LIMITS.perEmailAndIp; i++) expect((await loginAs(admin.email, 'wrong password!', ip)).status).toBe(401);
    const blocked = await loginAs(admin.email, PASSWORD, ip);
    expect(blocked.status).toBe(429);
    expect(blocked.json.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('cannot be used to lock someone out: failures elsewhere do not count against their address', async () => {
    const { admin } = await givenAccount();
    const attacker = '192.0.2.201';
    for (let i = 0; i < LOGIN_LIMITS.perEmailAndIp + 2; i++) await loginAs(admin.email, 'wrong password!', attacker);
    expect((await loginAs(admin.email, PASSWORD, attacker)).status).toBe(429);
    expect((await loginAs(admin.email, PASSWORD, '192.0.2.202')).status).toBe(200);
  });

  it('counts failures only, and a success resets the count', async () => {
    const { admin } = await givenAccount();
    const ip = randomIp();
    for (let i = 0; i < LOGIN_LIMITS.perEmailAndIp + 5; i++) expect((await loginAs(admin.email, PASSWORD, ip)).status).toBe(200);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < LOGIN_LIMITS.perEmailAndIp - 1; i++) expect((await loginAs(admin.email, 'wrong password!', ip)).status).toBe(401);
      expect((await loginAs(admin.email, PASSWORD, ip)).status).toBe(200);
    }
  });

  it('upgrades a hash stored with older scrypt parameters at the next successful login, not at a failed one', async () => {
    const { admin } = await givenAccount();
    const key = { PK: `ACC#${admin.accountId}`, SK: `USER#${admin.userId}` };
    const salt = randomBytes(16);
    const old = [
      'scrypt',
      1024,
      8,
      1,
      salt.toString('base64url'),
      scryptSync(PASSWORD, salt, 32, { N: 1024, r: 8, p: 1 }).toString('base64url'),
    ].join('$');
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET passwordHash = :h',
        ExpressionAttributeValues: { ':h': old },
      }),
    );
    expect((await loginAs(admin.email, 'wrong password!')).status).toBe(401);
    expect((await db().send(new GetCommand({ TableName: tableName(), Key: key }))).Item?.passwordHash).toBe(old);
    expect((await loginAs(admin.email)).status).toBe(200);
    const upgraded = (await db().send(new GetCommand({ TableName: tableName(), Key: key }))).Item?.passwordHash as string;
    expect(upgraded).toMatch(new RegExp(`^scrypt\\$${config().PASSWORD_SCRYPT_N}\\$8\\$1\\$`));
    expect(upgraded).not.toBe(old);
    expect((await loginAs(admin.email)).status).toBe(200);
  });

  it('limits attempts per client address across emails', async () => {
    const ip = '192.0.2.77';
    const results = await Promise.all(
      Array.from({ length: LOGIN_LIMITS.perIp + 5 }, () => loginAs(uniqueEmail('spray'), 'whatever pw', ip)),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LOGIN_LIMITS.perIp);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  it('rejects malformed bodies with precise problems', async () => {
    const bad = await invoke(
      login,
      apiEvent({ method: 'POST', path: '/api/auth/login', body: '{"email":', headers: { 'content-type': 'application/json' } }),
    );
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('INVALID_JSON');
    const wrongType = await invoke(login, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email: 3 } }));
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.code).toBe('VALIDATION_FAILED');
    expect(wrongType.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(['email', 'password']);
    const tooBig = await invoke(
      login,
      apiEvent({ method: 'POST', path: '/api/auth/login', body: { email: 'x'.repeat(5000), password: 'y' } }),
    );
    expect(tooBig.status).toBe(413);
    expect(tooBig.headers['content-type']).toBe('application/problem+json');
  });
});

describe('console sessions', () => {
  it('logout revokes the session for the next request', async () => {
    const { member } = await givenAccount();
    const { json } = await loginAs(member.email);
    expect((await invoke(logout, apiEvent({ method: 'POST', path: '/api/auth/logout', headers: bearer(json.token) }))).status).toBe(204);
    const after = await invoke(me, apiEvent({ path: '/api/auth/me', headers: bearer(json.token) }));
    expect(after.status).toBe(401);
    expect(after.json.code).toBe('INVALID_SESSION');
  });

  it('refuses forged, malformed, expired and API-key tokens', async () => {
    const { admin, adminKey } = await givenAccount();
    const { json } = await loginAs(admin.email);
    const [, id] = json.token.split('_');
    const forged = mintToken('dys', id); // right id and checksum, wrong secret
    const expiredToken = mintToken('dys', '01jexpiredsession000000000');
    await putSession({
      sessionId: '01jexpiredsession000000000',
      tokenHash: hashToken(expiredToken),
      accountId: admin.accountId,
      userId: admin.userId,
      createdAt: Date.now() - 2000,
      expiresAt: Date.now() - 1000,
    });
    for (const token of [
      forged,
      `${json.token.slice(0, -1)}${json.token.endsWith('x') ? 'y' : 'x'}`,
      'dys_x_y',
      expiredToken,
      adminKey.token,
    ]) {
      const res = await invoke(me, apiEvent({ path: '/api/auth/me', headers: bearer(token) }));
      expect(res.status, token).toBe(401);
    }
    expect((await invoke(me, apiEvent({ path: '/api/auth/me' }))).status).toBe(401);
  });
});

describe('members', () => {
  it('admins create members; members may not; emails are unique', async () => {
    const { admin, member, account } = await givenAccount();
    const adminToken = (await loginAs(admin.email)).json.token;
    const memberToken = (await loginAs(member.email)).json.token;
    const email = uniqueEmail('new');
    const createdRes = await invoke(
      createMember,
      apiEvent({ method: 'POST', path: '/api/members', headers: bearer(adminToken), body: { email, password: PASSWORD } }),
    );
    expect(createdRes.status).toBe(201);
    expect(createdRes.json).toMatchObject({ email, role: 'member' });
    expect(createdRes.json).not.toHaveProperty('passwordHash');

    const denied = await invoke(
      createMember,
      apiEvent({ method: 'POST', path: '/api/members', headers: bearer(memberToken), body: { email: uniqueEmail(), password: PASSWORD } }),
    );
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe('ADMIN_ONLY');

    const dup = await invoke(
      createMember,
      apiEvent({
        method: 'POST',
        path: '/api/members',
        headers: bearer(adminToken),
        body: { email: email.toUpperCase(), password: PASSWORD },
      }),
    );
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe('EMAIL_TAKEN');

    const weak = await invoke(
      createMember,
      apiEvent({
        method: 'POST',
        path: '/api/members',
        headers: bearer(adminToken),
        body: { email: 'not-an-email', password: 'short', role: 'owner' },
      }),
    );
    expect(weak.status).toBe(400);
    expect(weak.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(['email', 'password', 'role']);

    const list = await invoke(listMembers, apiEvent({ path: '/api/members', headers: bearer(memberToken) }));
    expect(list.json.items.map((u: { email: string }) => u.email).sort()).toEqual([admin.email, member.email, email].sort());
    expect(list.json.items.every((u: { id: string }) => u.id.startsWith('usr_'))).toBe(true);
    expect(account.accountId).toMatch(/^acc_/);
  });
});
