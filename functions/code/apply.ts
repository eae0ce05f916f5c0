// The stack's workflows (docs/workflows-as-code.md "With the stack"): a CloudFormation custom resource
// whose properties carry a folder of workflow files (checked at synth), applied to one account at every
// deployment that changes them or the release, as `flowgate apply` would (idempotent). A failed apply
// fails the deployment with its reason (the rollback applies the previous folder again); deleting the
// resource leaves the workflows as they are.
import { requireConfig } from '../../shared/config.ts';
import { listUsers } from '../../shared/db/entities/user.ts';
import * as z from 'zod';
import { applyWorkflowFolder } from '../../shared/domain/workflow-code.ts';
import { WorkflowCodeBody } from '../../shared/schemas/workflow-file.ts';
import { AppError } from '../../shared/errors.ts';
import { logger } from '../../shared/logger.ts';
import { workerSettings } from '../bindings.ts';

export type StackWorkflowsEvent = {
  RequestType: 'Create' | 'Update' | 'Delete';
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  PhysicalResourceId?: string;
  /** CloudFormation passes every property value as text: the folder is one JSON string. */
  ResourceProperties: { Account: string; Owner?: string; Prune?: string; Workflows: string };
};

const Folder = z.array(z.object({ key: z.string(), settings: WorkflowCodeBody }));

/** The member the workflows it creates belong to: `Owner` (an email), else the account's first admin. */
async function ownerOf(accountId: string, email: string | undefined) {
  const users = (await listUsers(accountId)).filter((u) => !u.disabled).sort((a, b) => a.createdAt - b.createdAt);
  const owner = email ? users.find((u) => u.email === email.toLowerCase()) : users.find((u) => u.role === 'admin');
  if (!owner) throw new Error(email ? `${email} is no enabled member of ${accountId}` : `${accountId} has no enabled admin`);
  return owner;
}

const reasonOf = (e: unknown) => {
  if (e instanceof z.ZodError) return `invalid workflows: ${e.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`;
  if (e instanceof AppError) {
    const errors = ((e.extra.body?.errors ?? []) as { path: string; message: string }[]).map((f) => `${f.path} ${f.message}`);
    return [`${e.code}: ${e.message}`, ...errors].join('; ');
  }
  return e instanceof Error ? e.message : String(e);
};

export const handler = async (event: StackWorkflowsEvent) => {
  const props = event.ResourceProperties;
  const physicalId = event.PhysicalResourceId ?? `workflows-${props.Account}`;
  let outcome: { Status: 'SUCCESS' | 'FAILED'; Reason?: string; Data?: Record<string, string> };
  try {
    requireConfig(workerSettings('code/apply'));
    if (event.RequestType === 'Delete') outcome = { Status: 'SUCCESS' };
    else {
      const owner = await ownerOf(props.Account, props.Owner);
      const actor = { accountId: props.Account, userId: owner.userId, role: owner.role, kind: 'operator' as const };
      // Parsed as the API parses a file's settings: defaults applied, definitions checked.
      const folder = Folder.parse(JSON.parse(props.Workflows));
      const { changes, deleted } = await applyWorkflowFolder(actor, folder, { prune: props.Prune === 'true' });
      const count = (a: string) => String(changes.filter((c) => c.action === a).length);
      const data = { created: count('create'), updated: count('update'), unchanged: count('unchanged'), deleted: String(deleted.length) };
      logger.info('stack workflows applied', { accountId: props.Account, ...data, deletedKeys: deleted });
      outcome = { Status: 'SUCCESS', Data: data };
    }
  } catch (e) {
    logger.error('stack workflows not applied', { error: e as Error });
    outcome = { Status: 'FAILED', Reason: reasonOf(e).slice(0, 3000) };
  }
  const body = {
    ...outcome,
    PhysicalResourceId: physicalId,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
  };
  // The presigned URL signs no content type: send none.
  const res = await fetch(event.ResponseURL, { method: 'PUT', headers: { 'content-type': '' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`CloudFormation's response URL answered ${res.status}`);
  return body;
};
