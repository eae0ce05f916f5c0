import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { NextPage, Table, Time } from '../../../../shared/console/components.tsx';
import { page } from '../../../../shared/console/render.tsx';
import type { Workflow } from '../../../../shared/domain/read-types.ts';
import type { readWorkflowVersion, versionEntryView } from '../../../../shared/domain/workflow-versions.ts';
import { Diff } from './diff.tsx';

/** Versions a page of the list shows. */
export const VERSIONS_PAGE = 25;

type Entry = ReturnType<typeof versionEntryView>;
type Version = Awaited<ReturnType<typeof readWorkflowVersion>>;

export type VersionsPageData = {
  workflow: Workflow;
  versions: Entry[];
  nextCursor: string | null;
  cursor: string | undefined;
  /** Every user of the account by id: a version's author is shown by email. */
  emails: Map<string, string>;
  canEdit: boolean;
  diff?: { from: Version; to: Version } | undefined;
};

const base = (w: Workflow) => `/console/workflows/${w.workflowId}`;
const compareHref = (w: Workflow, from: number, to: number) =>
  `${base(w)}/versions?${new URLSearchParams({ from: String(from), to: String(to) })}`;

/** Who saved a version: their email, "a removed user", or "—" where it was not recorded. */
function Author({ id, emails }: { id: string | null; emails: Map<string, string> }) {
  if (id === null) return <span class="muted">—</span>;
  return <>{emails.get(id) ?? <span class="muted">a removed user</span>}</>;
}

/** The GET form choosing two versions to compare (the diff's default: a version against the one before). */
function CompareForm({ w, diff }: { w: Workflow; diff: VersionsPageData['diff'] }) {
  return (
    <form method="get" action={`${base(w)}/versions`} class="compare">
      <div class="grid">
        <label>
          From version
          <input type="number" name="from" min={1} max={w.version} required value={diff ? String(diff.from.version) : ''} />
        </label>
        <label>
          To version
          <input type="number" name="to" min={1} max={w.version} required value={diff ? String(diff.to.version) : String(w.version)} />
        </label>
      </div>
      <button type="submit" class="secondary">
        Compare
      </button>
    </form>
  );
}

/** Every version of the workflow (a page at a time), its author and time, its diff with the one before and "Restore this version". */
export function versionsPage(session: ConsoleSession, d: VersionsPageData) {
  const w = d.workflow;
  return page(
    { title: `Versions of ${w.name}`, session, section: '/console/workflows' },
    <>
      <p>
        <a href={base(w)}>{`Back to ${w.name}`}</a>
        {d.canEdit ? (
          <>
            {' · '}
            <a href={`${base(w)}/edit`}>Edit</a>
          </>
        ) : null}
      </p>
      <p class="muted">
        Every save keeps its version; runs execute the version they started with. Restoring a version saves its definition as a new version.
      </p>
      <Table caption="Versions, newest first">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Saved</th>
            <th scope="col">By</th>
            <th scope="col">Changes</th>
            {d.canEdit ? <th scope="col">Restore</th> : null}
          </tr>
        </thead>
        <tbody>
          {d.versions.map((v) => (
            <tr key={String(v.version)}>
              <td>
                <a href={v.version === w.version ? base(w) : `${base(w)}?version=${v.version}`}>{`Version ${v.version}`}</a>
                {v.version === w.version ? <span class="muted"> (current)</span> : null}
              </td>
              <td>
                <Time ms={v.createdAt ?? undefined} />
              </td>
              <td>
                <Author id={v.createdBy} emails={d.emails} />
              </td>
              <td>
                {v.version > 1 ? (
                  <a
                    href={compareHref(w, v.version - 1, v.version)}
                    aria-label={`Compare with previous (version ${v.version - 1} → ${v.version})`}
                  >
                    Compare with previous
                  </a>
                ) : (
                  <span class="muted">the first</span>
                )}
              </td>
              {d.canEdit ? (
                <td>
                  <a href={`${base(w)}/versions/${v.version}/restore`} aria-label={`Restore this version (${v.version})`}>
                    Restore this version
                  </a>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </Table>
      <NextPage path={`${base(w)}/versions`} query={{}} cursor={d.nextCursor} />
      <section aria-labelledby="compare">
        <h2 id="compare">{d.diff ? `Diff: version ${d.diff.from.version} → version ${d.diff.to.version}` : 'Compare two versions'}</h2>
        <CompareForm w={w} diff={d.diff} />
        {d.diff ? (
          <Diff
            from={d.diff.from.definition}
            to={d.diff.to.definition}
            label={`Changes from version ${d.diff.from.version} to version ${d.diff.to.version}`}
          />
        ) : null}
      </section>
    </>,
  );
}
