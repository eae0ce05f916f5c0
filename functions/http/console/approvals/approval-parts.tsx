import { duration, Time } from '../../../../shared/console/components.tsx';

// Pieces the approvals inbox and the approval page share.

type Counted = { approvals?: number; minApprovals?: number; status: string };
/** Approvals so far: a quorum's votes; a single approval has one once APPROVED (as the v1 view counts). */
const approvalsOf = (a: Counted) => a.approvals ?? (a.status === 'APPROVED' ? 1 : 0);

/** A quorum's progress, "1 of 2" (a single approval: "0 of 1" until approved). */
export const quorumText = (a: Counted) => `${approvalsOf(a)} of ${a.minApprovals ?? 1}`;

/** How many approvals a pending quorum still needs. */
export const stillNeeded = (a: Counted) => Math.max(0, (a.minApprovals ?? 1) - approvalsOf(a));

const INPUTS_CHARS = 160;

/** A run's inputs on one line (`env: "production", amount: 100`), cut at 160 characters. */
export function compactInputs(variables: Record<string, unknown> | undefined): string {
  if (!variables || Object.keys(variables).length === 0) return '';
  const text = Object.entries(variables)
    .map(([k, v]) => `${k}: ${JSON.stringify(v) ?? 'undefined'}`)
    .join(', ');
  return text.length > INPUTS_CHARS ? `${text.slice(0, INPUTS_CHARS - 1)}…` : text;
}

/** Who may decide, in words: "admins", "members", or a named user's email (their id when unknown). */
export function reviewerNames(reviewers: readonly string[], people: ReadonlyMap<string, string>): string[] {
  return reviewers.map((r) => {
    if (r === 'role:admin') return 'admins';
    if (r === 'role:member') return 'members';
    if (r.startsWith('user:')) return people.get(r.slice('user:'.length)) ?? r.slice('user:'.length);
    return r;
  });
}

/** A deadline: the time, and while the approval is open how long is left ("in 23 h") or that it has passed. None: "none". */
export function Deadline({ ms, now, open = true }: { ms: number | undefined; now: number; open?: boolean }) {
  if (ms === undefined) return <span class="muted">none</span>;
  if (!open) return <Time ms={ms} />;
  return (
    <>
      <Time ms={ms} /> <span class="muted">({ms > now ? `in ${duration(ms - now)}` : 'passed'})</span>
    </>
  );
}
