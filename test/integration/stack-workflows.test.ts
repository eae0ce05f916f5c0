import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler, type StackWorkflowsEvent } from '../../functions/code/apply.ts';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { listWorkflows, listWorkflowVersions } from '../../shared/db/entities/workflow.ts';
import { invoke as invokeFunction, workerFunction } from '../../infra/local/lambda.ts';
import { givenAccount } from '../support/fixtures.ts';

/**
 * The stack's workflows (docs/workflows-as-code.md "With the stack"): the custom resource's function as
 * CloudFormation invokes it, with its grants enforced, answering on a response URL (a listener here).
 */

const answers: Record<string, any>[] = [];
const listener = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    answers.push({ method: req.method, contentType: req.headers['content-type'], ...JSON.parse(body) });
    res.end();
  });
});
let url: string;
let account: Awaited<ReturnType<typeof givenAccount>>;
beforeAll(async () => {
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/response`;
  account = await givenAccount();
});
afterAll(() => new Promise((r) => listener.close(r)));

const wf = (key: string, x: number) => ({ key, settings: { name: key, definition: { steps: [{ id: 'a', type: 'set', values: { x } }] } } });
const event = (type: StackWorkflowsEvent['RequestType'], folder: unknown[], extra: Record<string, string> = {}): StackWorkflowsEvent => ({
  RequestType: type,
  ResponseURL: url,
  StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/flowgate-test/1',
  RequestId: `req-${answers.length}`,
  LogicalResourceId: 'StackWorkflows',
  ...(type === 'Create' ? {} : { PhysicalResourceId: `workflows-${account.account.accountId}` }),
  ResourceProperties: { Account: account.account.accountId, Workflows: JSON.stringify(folder), ...extra },
});
const run = async (e: StackWorkflowsEvent) => {
  const outcome = await invokeFunction(workerFunction('code/apply', 300), handler, e);
  expect(outcome.status).toBe('ok');
};
const coded = async () => (await listWorkflows(account.account.accountId, 100)).items.filter((w) => w.code);

describe('the stack workflows custom resource', () => {
  it('creates, leaves unchanged on the next release (no version), prunes only with Prune, and answers CloudFormation each time', async () => {
    await run(event('Create', [wf('one', 1), wf('two', 2)]));
    expect(answers.at(-1)).toMatchObject({
      method: 'PUT',
      contentType: '',
      Status: 'SUCCESS',
      PhysicalResourceId: `workflows-${account.account.accountId}`,
      LogicalResourceId: 'StackWorkflows',
      Data: { created: '2', updated: '0', unchanged: '0', deleted: '0' },
    });
    const [first] = await coded();
    expect(first).toMatchObject({ ownerId: account.admin.userId });
    const log = await listAuditEntries({ accountId: account.account.accountId, action: 'workflow.created' }, 10);
    expect(log.items.map((e) => [e.actor.kind, e.channel])).toEqual([
      ['operator', 'cli'],
      ['operator', 'cli'],
    ]);

    await run(event('Update', [wf('one', 1), wf('two', 2)]));
    expect(answers.at(-1)).toMatchObject({ Status: 'SUCCESS', Data: { created: '0', updated: '0', unchanged: '2', deleted: '0' } });
    for (const w of await coded()) expect((await listWorkflowVersions(w.accountId, w.workflowId, 10)).items).toHaveLength(1);

    await run(event('Update', [wf('one', 5)]));
    expect(answers.at(-1)).toMatchObject({ Status: 'SUCCESS', Data: { updated: '1', deleted: '0' } });
    expect((await coded()).map((w) => w.code?.key).sort()).toEqual(['one', 'two']);
    await run(event('Update', [wf('one', 5)], { Prune: 'true' }));
    expect(answers.at(-1)).toMatchObject({ Status: 'SUCCESS', Data: { unchanged: '1', deleted: '1' } });
    expect((await coded()).map((w) => w.code?.key)).toEqual(['one']);

    // Deleting the resource leaves the workflows.
    await run(event('Delete', []));
    expect(answers.at(-1)).toMatchObject({ Status: 'SUCCESS' });
    expect(await coded()).toHaveLength(1);
  });

  it('fails the deployment with the reason when the account refuses a workflow or has no such member', async () => {
    const refused = {
      key: 'quorum',
      settings: {
        name: 'Quorum',
        definition: {
          steps: [{ id: 'ok', type: 'manual_approval', title: 'Ok?', reviewers: ['role:admin'], minApprovals: 5, timeoutSeconds: 60 }],
        },
      },
    };
    await run(event('Update', [refused]));
    expect(answers.at(-1)).toMatchObject({
      Status: 'FAILED',
      Reason: expect.stringMatching(/^VALIDATION_FAILED: .*minApprovals must be at most 1/),
    });
    await run(event('Update', [wf('one', 5)], { Owner: 'nobody@test.local' }));
    expect(answers.at(-1)).toMatchObject({
      Status: 'FAILED',
      Reason: `nobody@test.local is no enabled member of ${account.account.accountId}`,
    });
  });
});
