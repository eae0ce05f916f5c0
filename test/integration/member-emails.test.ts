import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as me } from '../../functions/http/auth/me.ts';
import { handler as createMember } from '../../functions/http/members/create.ts';
import { handler as removeMember } from '../../functions/http/members/remove.ts';
import { db, tableName } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { hashPassword } from '../../shared/passwords.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

// Issue 41, findings 7 and 11: "Add member" answers the same whether or not another account has a
// member with the email (an email may be a member of several accounts, each with its own password),
// and creating members at once never answers 5xx: the email is checked before the password is hashed.

// The real hash, counted: how many requests did the hash's work.
vi.mock('../../shared/passwords.ts', async (original) => {
  const real = await original<typeof import('../../shared/passwords.ts')>();
  return { ...real, hashPassword: vi.fn(real.hashPassword) };
});
const hashes = () => vi.mocked(hashPassword).mock.calls.length;

const add = (adminToken: string, email: string, password = PASSWORD) =>
  invoke(createMember, apiEvent({ method: 'POST', path: '/api/members', headers: bearer(adminToken), body: { email, password } }));
const signIn = (email: string, password: string) =>
  invoke(login, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password }, sourceIp: freshIp() }));
const whoIs = async (token: string) => (await invoke(me, apiEvent({ path: '/api/auth/me', headers: bearer(token) }))).json;

describe('"Add member" and other accounts', () => {
  it('answers an email of another account’s member exactly as a fresh one; each member signs in to their own account', async () => {
    const [a, b] = await Promise.all([givenAccount(), givenAccount()]);
    const bAdmin = await sessionOf(b.admin.email);
    const theirs = await add(bAdmin, a.member.email.toUpperCase(), 'the b password');
    const fresh = await add(bAdmin, uniqueEmail('fresh'), 'the b password');
    expect(theirs.status, theirs.body).toBe(201);
    expect(Object.keys(theirs.json).sort()).toEqual(Object.keys(fresh.json).sort());
    expect(theirs.json).toMatchObject({ email: a.member.email, role: 'member', disabled: false });
    // One email, two members, each with their own password and account.
    const inA = await signIn(a.member.email, PASSWORD);
    const inB = await signIn(a.member.email, 'the b password');
    expect(inA.status).toBe(200);
    expect(inB.status).toBe(200);
    expect((await whoIs(inA.json.token)).account.id).toBe(a.account.accountId);
    expect((await whoIs(inB.json.token)).account.id).toBe(b.account.accountId);
    expectProblem(await signIn(a.member.email, 'neither password'), 401, 'INVALID_CREDENTIALS');
    // Within one account an email is still one member's.
    expectProblem(await add(bAdmin, a.member.email), 409, 'EMAIL_TAKEN');
    // Removing B's member leaves A's.
    const removed = await invoke(
      removeMember,
      apiEvent({ method: 'DELETE', path: `/api/members/${theirs.json.id}`, params: { id: theirs.json.id }, headers: bearer(bAdmin) }),
    );
    expect(removed.status, removed.body).toBe(204);
    expect((await signIn(a.member.email, 'the b password')).status).toBe(401);
    expect((await signIn(a.member.email, PASSWORD)).status).toBe(200);
  });

  it('reads the claims written before emails were per account: sign-in, uniqueness in the account, removal', async () => {
    const [a, b] = await Promise.all([givenAccount(), givenAccount()]);
    const email = a.member.email;
    // The member's claim as an older release wrote it.
    await db().send(new DeleteCommand({ TableName: tableName(), Key: { PK: `EMAIL#${email}`, SK: `ACC#${a.account.accountId}` } }));
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { PK: `EMAIL#${email}`, SK: 'EMAIL', type: 'email', accountId: a.account.accountId, userId: a.member.userId },
      }),
    );
    expect((await signIn(email, PASSWORD)).status).toBe(200);
    const [aAdmin, bAdmin] = await Promise.all([sessionOf(a.admin.email), sessionOf(b.admin.email)]);
    expectProblem(await add(aAdmin, email), 409, 'EMAIL_TAKEN');
    expect((await add(bAdmin, email, 'the b password')).status).toBe(201);
    const gone = await invoke(
      removeMember,
      apiEvent({ method: 'DELETE', path: `/api/members/${a.member.userId}`, params: { id: a.member.userId }, headers: bearer(aAdmin) }),
    );
    expect(gone.status, gone.body).toBe(204);
    const legacy = await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `EMAIL#${email}`, SK: 'EMAIL' } }));
    expect(legacy.Item).toBeUndefined();
    expect((await signIn(email, 'the b password')).status).toBe(200);
    expect((await add(aAdmin, email, 'back again 12345')).status).toBe(201);
  });
});

describe('many member creations at once', () => {
  const before = process.env.PASSWORD_SCRYPT_N;
  afterEach(() => {
    process.env.PASSWORD_SCRYPT_N = before;
    resetConfig();
  });

  it('20 creations of one email: one 201 and nineteen 409 that hash no password, no 5xx', async () => {
    const a = await givenAccount();
    const adminToken = await sessionOf(a.admin.email);
    // A hash that takes a while (a quarter of production's cost), so that waiting for one shows.
    process.env.PASSWORD_SCRYPT_N = String(2 ** 15);
    resetConfig();
    const email = uniqueEmail('burst');
    const hashed = hashes();
    const t0 = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await add(adminToken, email);
        return { status: res.status, code: res.json?.code as string | undefined, at: performance.now() - t0 };
      }),
    );
    // One password hashed: the refused ones never got to it.
    expect(hashes() - hashed).toBe(1);
    expect(answers.filter((x) => x.status >= 500)).toEqual([]);
    const created = answers.filter((x) => x.status === 201);
    const refused = answers.filter((x) => x.status === 409);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(19);
    expect(new Set(refused.map((x) => x.code))).toEqual(new Set(['EMAIL_TAKEN']));
    // Nobody waited for the others' hashes: every answer came within one hash of the first.
    expect(Math.max(...answers.map((x) => x.at))).toBeLessThan(Math.min(...answers.map((x) => x.at)) + 5_000);
  });

  it('an email the account has already is refused without hashing, for every concurrent request', async () => {
    const a = await givenAccount();
    const adminToken = await sessionOf(a.admin.email);
    process.env.PASSWORD_SCRYPT_N = String(2 ** 15);
    resetConfig();
    const fresh = uniqueEmail('fresh');
    const hashed = hashes();
    const [control, ...dups] = await Promise.all([
      add(adminToken, fresh).then((r) => ({ status: r.status })),
      ...Array.from({ length: 10 }, () => add(adminToken, a.member.email).then((r) => ({ status: r.status }))),
    ]);
    expect(control?.status).toBe(201);
    expect(dups.map((d) => d.status)).toEqual(Array(10).fill(409));
    expect(hashes() - hashed).toBe(1);
  });
});
