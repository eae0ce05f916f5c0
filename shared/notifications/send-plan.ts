import type { Approval } from '../db/entities/approval.ts';
import { asksPeople } from '../engine/every-step.ts';
import type { Step } from '../engine/steps/index.ts';
import type { ApprovalNotify } from '../engine/steps/approval-notify.ts';
import type { ApprovalNotice } from '../engine/notify.ts';

/**
 * What one `send`, `remind` or `escalate` notice sends: the `notify` entries, whose reviewers an entry
 * without `to` reaches (`audience`), who is left out, and the stored messages' key prefix (a reminder
 * or an escalation is a new message beside the first, each sent once however often the notice is retried).
 */
export type SendPlan = {
  entries: readonly ApprovalNotify[];
  audience: Pick<Approval, 'accountId' | 'reviewers'>;
  /** Reviewers (user ids) not to message: those who already approved (a quorum's votes). */
  skip: ReadonlySet<string>;
  prefix: string;
  /** What the message's title starts with (a reminder's, an escalation's). */
  titlePrefix?: string;
};

/** The plan of a notice on `approval` at step `step`; undefined when nothing is to be sent (a reminder on an approval handled since). */
export function sendPlan(m: Pick<ApprovalNotice, 'action' | 'reminder'>, approval: Approval, step: Step | undefined): SendPlan | undefined {
  if (!asksPeople(step)) return undefined;
  if (m.action === 'send') return { entries: step.notify ?? [], audience: approval, skip: new Set(), prefix: '' };
  if (approval.status !== 'PENDING') return undefined;
  if (m.action === 'remind')
    return {
      entries: step.notify ?? [],
      audience: approval,
      skip: new Set(approval.approvedBy ?? []),
      prefix: `r${m.reminder ?? 0}#`,
      titlePrefix: `Reminder${approval.remind ? ` ${m.reminder ?? 0} of ${approval.remind.max}` : ''}: `,
    };
  if (m.action === 'escalate' && step.escalate)
    return {
      entries: step.escalate.notify ?? [],
      audience: { accountId: approval.accountId, reviewers: step.escalate.reviewers },
      skip: new Set(approval.approvedBy ?? []),
      prefix: 'e#',
      titlePrefix: 'Escalated: ',
    };
  return undefined;
}
