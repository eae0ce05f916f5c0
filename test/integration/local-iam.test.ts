import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as me } from '../../functions/http/auth/me.ts';
import { route as meRoute } from '../../functions/http/auth/me.route.ts';
import { type FunctionGrant, grantsOfRoute } from '../../infra/iam.ts';
import { identityOf, runAs } from '../../infra/local/iam.ts';
import { invoke } from '../../infra/local/lambda.ts';
import { db, tableName } from '../../shared/clients.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/** IAM as the local stack enforces it (infra/local/iam.ts), on the real DynamoDB Local. */

const as = <T>(grants: readonly FunctionGrant[], work: () => Promise<T>) => runAs(identityOf('test-fn', grants), work);
const tag = () => Math.random().toString(36).slice(2);
const bump = (pk: string) =>
  db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: { PK: pk, SK: 'X' },
      UpdateExpression: 'ADD n :one',
      ExpressionAttributeValues: { ':one': 1 },
    }),
  );

describe('local IAM', () => {
  it("refuses a call the function's statements do not allow, with AWS's AccessDeniedException, and writes nothing", async () => {
    const pk = `IAMTEST#${tag()}`;
    const refused = await as(['table:read'], () => bump(pk)).catch((e: unknown) => e as any);
    expect(refused.name).toBe('AccessDeniedException');
    expect(refused.$metadata.httpStatusCode).toBe(400);
    expect(refused.message).toMatch(
      /^User: arn:aws:sts::000000000000:assumed-role\/test-fn-role\/test-fn is not authorized to perform: dynamodb:UpdateItem on resource: arn:aws:dynamodb:[\w-]+:000000000000:table\//,
    );
    expect((await db().send(new GetCommand({ TableName: tableName(), Key: { PK: pk, SK: 'X' } }))).Item).toBeUndefined();
    await as(['table:write'], () => bump(pk));
    expect((await db().send(new GetCommand({ TableName: tableName(), Key: { PK: pk, SK: 'X' } }))).Item).toMatchObject({ n: 1 });
  });

  it('holds a dynamodb:LeadingKeys condition on every item, a transaction’s too', async () => {
    await expect(as(['table:authfail'], () => bump(`AUTHFAIL#${tag()}`))).resolves.toBeDefined();
    await expect(as(['table:authfail'], () => bump(`ACC#${tag()}`))).rejects.toMatchObject({ name: 'AccessDeniedException' });
    const transaction = (pks: string[]) =>
      db().send(
        new TransactWriteCommand({
          TransactItems: pks.map((pk) => ({
            Update: {
              TableName: tableName(),
              Key: { PK: pk, SK: 'X' },
              UpdateExpression: 'ADD n :one',
              ExpressionAttributeValues: { ':one': 1 },
            },
          })),
        }),
      );
    await expect(as(['table:meter'], () => transaction([`ACC#${tag()}`, `RATE#${tag()}#1`]))).resolves.toBeDefined();
    await expect(as(['table:meter'], () => transaction([`ACC#${tag()}`, `SESSION#${tag()}`]))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining('dynamodb:UpdateItem'),
    });
    // A transaction's put is checked as PutItem: `table:meter` updates only.
    await expect(
      as(['table:meter'], () =>
        db().send(
          new TransactWriteCommand({ TransactItems: [{ Put: { TableName: tableName(), Item: { PK: `ACC#${tag()}`, SK: 'X' } } }] }),
        ),
      ),
    ).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringContaining('dynamodb:PutItem') });
  });

  it("fails a route whose grant is removed: GET /api/auth/me without table:read, or without its failure counter's update", async () => {
    const account = await givenAccount();
    const token = await sessionOf(account.member.email);
    const call = async (grants: readonly FunctionGrant[], headers: Record<string, string>) =>
      (await as(grants, () => me(apiEvent({ path: '/api/auth/me', headers }) as APIGatewayProxyEventV2, lambdaContext()))).statusCode;
    const all = grantsOfRoute(meRoute);
    expect(all).toEqual(['table:read', 'table:authfail']);
    expect(await call(all, { authorization: `Bearer ${token}` })).toBe(200);
    expect(await call(all, {})).toBe(401);
    expect(await call(['table:authfail'], { authorization: `Bearer ${token}` })).toBe(500);
    // Without it, every missing or expired session was a 500 on AWS (its failure is counted).
    expect(await call(['table:read'], {})).toBe(500);
  });

  it('makes no call for an invocation past its timeout: Lambda stopped it', async () => {
    const pk = `IAMTEST#${tag()}`;
    let late: unknown;
    const outcome = await invoke(
      { name: 'slow-fn', timeoutSeconds: 0.2, grants: ['table:write'] },
      async () => {
        await new Promise((r) => setTimeout(r, 400));
        late = await bump(pk).catch((e: unknown) => e);
        return 'done';
      },
      {},
    );
    expect(outcome.status).toBe('timeout');
    await new Promise((r) => setTimeout(r, 400));
    expect(late).toMatchObject({ name: 'InvocationEnded' });
    expect((await db().send(new GetCommand({ TableName: tableName(), Key: { PK: pk, SK: 'X' } }))).Item).toBeUndefined();
  });
});
