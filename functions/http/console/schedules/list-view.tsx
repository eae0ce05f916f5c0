import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { RunLink, Status, Table } from '../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import type { AccountSchedule } from '../../../../shared/domain/schedule-console.ts';

// The schedules list (/console/schedules, or one workflow's: ?workflowId=): each schedule with its
// workflow, expression, zone, next fire, last run, skips and state, and its actions.

export type Usage = { enabled: number; limit: number | undefined; plan: string | null };

/** "3 of 5 schedules" (enabled ones, which the plan counts); "3 schedules (no limit)". */
export const usageText = (u: Usage) =>
  u.limit === undefined ? `${u.enabled} schedules enabled (the plan has no limit)` : `${u.enabled} of ${u.limit} schedules`;

const local = (iso: string | undefined) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : undefined);

/** A row's action that changes nothing destructive: a small form with one button. */
function ActionButton({ session, s, action, label }: { session: ConsoleSession; s: AccountSchedule; action: string; label: string }) {
  return (
    <form method="post" action={`/console/schedules/${s.id}/${action}`} class="inline">
      <Csrf session={session} />
      <button type="submit" class="secondary outline small" aria-label={`${label} ${s.name}`}>
        {label}
      </button>
    </form>
  );
}

function Row({ session, s }: { session: ConsoleSession; s: AccountSchedule }) {
  const next = s.nextFireTimes[0];
  return (
    <tr>
      <th scope="row">{s.name}</th>
      <td>
        <a href={`/console/workflows/${s.workflowId}`}>{s.workflowName}</a>
      </td>
      <td>
        <code>{s.expression}</code>
      </td>
      <td>{s.timezone}</td>
      <td>{next ? <time datetime={next}>{local(next)}</time> : <span class="muted">—</span>}</td>
      <td>
        {s.lastExecutionId ? (
          <>
            <RunLink id={s.lastExecutionId} /> {s.lastStatus ? <Status value={s.lastStatus} /> : null}
          </>
        ) : (
          <span class="muted">none yet</span>
        )}
      </td>
      <td>{s.skips}</td>
      <td>{s.enabled ? 'Enabled' : 'Paused'}</td>
      <td class="row-actions">
        <ActionButton session={session} s={s} action="run" label="Run now" />
        {s.enabled ? (
          <ActionButton session={session} s={s} action="pause" label="Pause" />
        ) : (
          <ActionButton session={session} s={s} action="resume" label="Resume" />
        )}
        <a href={`/console/schedules/${s.id}/delete`} aria-label={`Delete ${s.name}`}>
          Delete
        </a>
      </td>
    </tr>
  );
}

export function schedulesPage(session: ConsoleSession, schedules: AccountSchedule[], usage: Usage, workflowId: string | undefined) {
  const create = `/console/schedules/new${workflowId ? `?${new URLSearchParams({ workflowId })}` : ''}`;
  return page(
    { title: 'Schedules', session, section: '/console/schedules' },
    <section>
      <p class="usage">
        <strong>{usageText(usage)}</strong>
        {usage.plan ? <span class="muted"> on the {usage.plan} plan</span> : null}
      </p>
      <p>
        <a href={create}>Create schedule</a>
        {workflowId ? (
          <>
            {' '}
            <a href="/console/schedules">All schedules</a>
          </>
        ) : null}
      </p>
      {schedules.length === 0 ? (
        <p>No schedules yet.</p>
      ) : (
        <Table caption="Schedules, newest first">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Workflow</th>
              <th scope="col">Expression</th>
              <th scope="col">Timezone</th>
              <th scope="col">Next fire</th>
              <th scope="col">Last run</th>
              <th scope="col">Skipped</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {schedules.map((s) => (
              <Row key={s.id} session={session} s={s} />
            ))}
          </tbody>
        </Table>
      )}
      <p class="muted">Next fire times are in each schedule's timezone.</p>
    </section>,
  );
}

/** On a workflow's page: where its schedules are managed ("Create schedule" for this workflow). */
export const WorkflowScheduleLinks = ({ workflowId }: { workflowId: string }) => (
  <p>
    <a href={`/console/schedules/new?${new URLSearchParams({ workflowId })}`}>Create schedule</a>
    {' · '}
    <a href={`/console/schedules?${new URLSearchParams({ workflowId })}`}>Manage this workflow's schedules</a>
  </p>
);
