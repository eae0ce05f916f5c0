import { getWorkflow, type Workflow } from '../db/entities/workflow.ts';
import { notFound } from '../errors.ts';

/** Who acts on a workflow: a member of its account, with their role when known. */
export type Actor = { accountId: string; userId: string; role?: 'admin' | 'member' };

/** Owner, listed editors and account admins may change a workflow (and bind webhooks and schedules to it). */
export const canEditWorkflow = (p: Actor, w: Workflow) => p.role === 'admin' || w.ownerId === p.userId || w.editors.includes(p.userId);

/** A workflow of the caller's account, or 404 (another account's id is indistinguishable from none). */
export async function requireWorkflow(accountId: string, workflowId: string): Promise<Workflow> {
  const w = await getWorkflow(accountId, workflowId);
  if (!w) throw notFound('WORKFLOW_NOT_FOUND', `Workflow ${workflowId} does not exist.`);
  return w;
}
