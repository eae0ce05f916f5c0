import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Time } from '../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import type { Workflow } from '../../../../shared/domain/read-types.ts';
import type { readWorkflowVersion } from '../../../../shared/domain/workflow-versions.ts';
import { Diff } from './diff.tsx';

type Version = Awaited<ReturnType<typeof readWorkflowVersion>>;

/** "Restore version 1 of 'Deploy'?": what it does, what it changes, and the button that POSTs. */
export function restoreConfirmPage(session: ConsoleSession, w: Workflow, old: Version, current: Version) {
  const base = `/console/workflows/${w.workflowId}`;
  return page(
    { title: `Restore version ${old.version} of '${w.name}'?`, session, section: '/console/workflows' },
    <>
      <p>
        {`Version ${old.version}`} (saved <Time ms={old.createdAt ?? undefined} />) is saved again as version {String(w.version + 1)}, the
        current one. Version {String(w.version)} and every other version stay as they are; runs already started keep their version.
      </p>
      <h2>{`What changes: version ${w.version} → version ${old.version}`}</h2>
      <Diff from={current.definition} to={old.definition} label={`Changes from version ${w.version} to version ${old.version}`} />
      <form method="post" action={`${base}/versions/${old.version}/restore`}>
        <Csrf session={session} />
        <input type="hidden" name="expected" value={String(w.version)} />
        <div class="actions">
          <button type="submit">Restore this version</button>
          <a href={`${base}/versions`}>Back to the versions</a>
        </div>
      </form>
    </>,
  );
}
