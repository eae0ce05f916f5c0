import type { Approval } from '../db/entities/approval.ts';
import { readNamed } from '../db/entities/named.ts';

// What a page about an approval names beside it: its workflow's name and its run's inputs (the link
// pages: approval-page.tsx, review-page.tsx), read together in one projected BatchGet.

export type ApprovalFacts = { workflowName: string | undefined; inputs: Record<string, unknown> | undefined };

/** A run's inputs as stored (JSON text, or an object), as an object; anything else: none. */
export function inputsOf(v: unknown): Record<string, unknown> | undefined {
  if (typeof v !== 'string') return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  try {
    const parsed = JSON.parse(v) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The workflow's name and the run's inputs of an approval (of its own account: the keys are the approval's). */
export async function approvalFacts(a: Pick<Approval, 'accountId' | 'workflowId' | 'executionId'>): Promise<ApprovalFacts> {
  const named = await readNamed(a.accountId, { executionIds: [a.executionId], workflowIds: [a.workflowId] });
  return { workflowName: named.workflows.get(a.workflowId), inputs: inputsOf(named.runs.get(a.executionId)?.variables) };
}
