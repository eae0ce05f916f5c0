import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { memberEmails, newestVersions, workflowSchedules } from '../../shared/domain/workflow-console.ts';
import { readRunPage, readRunValue, requireRunDelivery } from '../../shared/domain/run-console.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';

/**
 * The domain's read models of the console's run and workflow pages (shared/domain/run-console.ts,
 * workflow-console.ts), which the console's loaders call instead of shared/db/: the same page data as
 * the run page's loader of before, and nothing of another account.
 */

let given: Awaited<ReturnType<typeof givenAccount>>;
let other: Awaited<ReturnType<typeof givenAccount>>;
let executionId: string;
let workflowId: string;
let stop: () => Promise<unknown>;

beforeAll(async () => {
  await useOwnQueues();
  stop = startWorkers();
  [given, other] = await Promise.all([givenAccount(), givenAccount()]);
  const workflow = await createWorkflow(adminSession(given), {
    name: 'read models',
    definition: WorkflowDefinition.parse({ steps: [{ id: 'a', type: 'set', values: { x: '{% $vars.n %}' } }] }),
    recovery: false,
    editors: [],
  });
  workflowId = workflow.workflowId;
  const started = await startRun({ workflow, trigger: 'api', variables: { n: 7 }, startedBy: given.admin.userId });
  executionId = started.execution.executionId;
  await eventually(
    () => getExecution(given.account.accountId, executionId),
    (e) => e?.status === 'SUCCEEDED',
  );
});
afterAll(() => stop?.());

const reader = () => ({ accountId: given.account.accountId, userId: given.admin.userId, email: given.admin.email });

describe("the run pages' read model", () => {
  it("reads what the run page's loader reads: the run, its whole log, its inputs, who started it (you)", async () => {
    const page = await readRunPage(reader(), executionId, {});
    expect(page.execution.status).toBe('SUCCEEDED');
    expect(page.inputs).toEqual({ n: 7 });
    expect(page.startedBy).toEqual({ userId: given.admin.userId, email: given.admin.email });
    expect(page.log?.map((e) => e.type)).toContain('execution.succeeded');
  });

  it("answers 404 for another account's run, and a delivery of no run", async () => {
    const stranger = { accountId: other.account.accountId, userId: other.admin.userId, email: other.admin.email };
    await expect(readRunPage(stranger, executionId, {})).rejects.toMatchObject({ code: 'EXECUTION_NOT_FOUND' });
    await expect(requireRunDelivery(given.account.accountId, executionId, 'dlv_unknown')).rejects.toMatchObject({
      code: 'DELIVERY_NOT_FOUND',
    });
  });

  it('reads a value page: the inputs from the log, the variables from the run, none for a part it lacks', async () => {
    expect(await readRunValue(given.account.accountId, executionId, 'inputs')).toEqual({ n: 7 });
    expect(await readRunValue(given.account.accountId, executionId, 'variables')).toMatchObject({ n: 7 });
    await expect(readRunValue(other.account.accountId, executionId, 'inputs')).rejects.toMatchObject({ code: 'EXECUTION_NOT_FOUND' });
  });
});

describe("the workflow pages' read model", () => {
  it("reads the account's members by email, the workflow's schedules and versions, nothing of another account", async () => {
    const emails = await memberEmails(given.account.accountId);
    expect(emails.get(given.admin.userId)).toBe(given.admin.email);
    expect(emails.get(given.member.userId)).toBe(given.member.email);
    expect(emails.has(other.admin.userId)).toBe(false);
    expect(await workflowSchedules(given.account.accountId, workflowId)).toEqual([]);
    expect((await newestVersions(given.account.accountId, workflowId, 5)).items.map((v) => v.version)).toEqual([1]);
    expect((await newestVersions(other.account.accountId, workflowId, 5)).items).toEqual([]);
  });
});
