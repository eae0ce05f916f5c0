import { listWorkflowSchedules } from '../db/entities/schedule.ts';
import { listUsers } from '../db/entities/user.ts';
import { listWorkflowVersions } from '../db/entities/workflow.ts';

// The console's workflow pages' read model, beside the workflow itself (workflow-access.ts) and what
// the API reads of it: its schedules, its newest versions, and the account's members by email (an
// account has few: one Query) for the versions' authors.

/** userId → email of every member of the account (one Query). */
export async function memberEmails(accountId: string): Promise<Map<string, string>> {
  return new Map((await listUsers(accountId)).map((u) => [u.userId, u.email]));
}

/** A workflow's schedules (as stored: the page shows them with `scheduleView`). */
export const workflowSchedules = (accountId: string, workflowId: string) => listWorkflowSchedules(accountId, workflowId);

/** A workflow's newest `limit` versions (one page). */
export const newestVersions = (accountId: string, workflowId: string, limit: number) => listWorkflowVersions(accountId, workflowId, limit);
