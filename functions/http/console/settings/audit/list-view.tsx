import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { NextPage, Table, Time } from '../../../../../shared/console/components.tsx';
import { page } from '../../../../../shared/console/render.tsx';
import type { AuditEntry } from '../../../../../shared/domain/read-types.ts';
import type { FieldError } from '../../../../../shared/errors.ts';
import type { AuditForm } from './filters.ts';

/** Entries a page of the log shows. */
export const AUDIT_PAGE = 50;
const PATH = '/console/audit';

type Member = { id: string; email: string };
export type AuditView = {
  form: AuditForm;
  members: Member[];
  entries: AuditEntry[];
  nextCursor: string | null;
  cursor?: string | undefined;
  errors?: FieldError[];
  status?: number;
};

/** The console page of an object, where it has one. */
function objectHref(o: AuditEntry['object']): string | undefined {
  const id = encodeURIComponent(o.id);
  switch (o.type) {
    case 'workflow':
      return `/console/workflows/${id}`;
    case 'webhook':
      return `/console/webhooks/${id}`;
    case 'run':
      return `/console/runs/${id}`;
    case 'approval':
      return `/console/approvals/${id}`;
    case 'key':
      return '/console/keys';
    case 'secret':
      return '/console/secrets';
    case 'channel':
      return '/console/channels';
    case 'member':
      return '/console/members';
    case 'schedule':
      return '/console/schedules';
    default:
      return undefined;
  }
}

const FIELDS = [
  { name: 'action', label: 'Action', hint: 'Such as key.created or webhook.deleted' },
  { name: 'objectType', label: 'Object type', hint: 'Such as workflow, webhook, key, member' },
  { name: 'objectId', label: 'Object id', hint: 'The id of one object (a secret’s name)' },
  { name: 'from', label: 'From (UTC)', hint: 'An ISO 8601 time, such as 2026-11-27T21:05' },
  { name: 'to', label: 'To (UTC)', hint: 'An ISO 8601 time; later than From' },
] as const;

function Field({
  name,
  label,
  hint,
  v,
  first,
}: {
  name: keyof AuditForm;
  label: string;
  hint: string;
  v: AuditView;
  first: string | undefined;
}) {
  const id = `audit-${name}`;
  const error = v.errors?.find((e) => e.path === name);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type="text"
        value={v.form[name] ?? ''}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error ${id}-hint` : `${id}-hint`}
        autofocus={first === name}
      />
      <small id={`${id}-hint`} class="muted hint">
        {hint}
      </small>
      {error ? (
        <small id={`${id}-error`} class="error">
          {label}: {error.message}
        </small>
      ) : null}
    </div>
  );
}

function Filters({ v, session }: { v: AuditView; session: ConsoleSession }) {
  const first = v.errors?.[0]?.path;
  const actorError = v.errors?.find((e) => e.path === 'actor');
  const actor = v.form.actor ?? '';
  const listed = actor === '' || v.members.some((m) => m.id === actor);
  return (
    <form method="get" action={PATH} class="filters audit-filters" aria-label="Filter the audit log" novalidate>
      {session.principal.role === 'admin' ? (
        <div class="field">
          <label for="audit-actor">Actor</label>
          <select
            id="audit-actor"
            name="actor"
            aria-invalid={actorError ? 'true' : undefined}
            aria-describedby={actorError ? 'audit-actor-error' : undefined}
            autofocus={first === 'actor'}
          >
            <option value="">Anyone</option>
            {v.members.map((m) => (
              <option key={m.id} value={m.id} selected={m.id === actor}>
                {m.email}
              </option>
            ))}
            {listed ? null : (
              <option value={actor} selected>
                {actor}
              </option>
            )}
          </select>
          {actorError ? (
            <small id="audit-actor-error" class="error">
              Actor: {actorError.message}
            </small>
          ) : null}
        </div>
      ) : null}
      {FIELDS.map((f) => (
        <Field key={f.name} {...f} v={v} first={first} />
      ))}
      <button type="submit">Filter</button>
    </form>
  );
}

const query = (form: AuditForm) =>
  Object.fromEntries(Object.entries(form).filter(([, x]) => x !== undefined && x !== '')) as Record<string, string>;

function Actor({ e, emails }: { e: AuditEntry; emails: Map<string, string> }) {
  const who = e.actor.userId ? (emails.get(e.actor.userId) ?? e.actor.email ?? e.actor.userId) : undefined;
  if (e.actor.kind === 'operator') return <span>operator (CLI)</span>;
  if (e.actor.kind === 'key')
    return (
      <span>
        key <code>{e.actor.keyId}</code>
        {who ? ` of ${who}` : ''}
      </span>
    );
  if (e.actor.kind === 'anonymous') return <span>not signed in{who ? ` (as ${who})` : ''}</span>;
  return <span>{who ?? '—'}</span>;
}

function ObjectCell({ o }: { o: AuditEntry['object'] }) {
  const href = objectHref(o);
  const text = `${o.type} ${o.name ?? o.id}${o.version !== undefined ? ` (version ${o.version})` : ''}`;
  return href ? <a href={href}>{text}</a> : <span>{text}</span>;
}

/** The audit log page: its filters (a GET form), the entries, "Next page" and "Export NDJSON". */
export function auditPage(session: ConsoleSession, v: AuditView) {
  const emails = new Map(v.members.map((m) => [m.id, m.email]));
  emails.set(session.principal.userId, session.email);
  const q = query(v.form);
  const exportHref = `${PATH}/export${Object.keys(q).length ? `?${new URLSearchParams(q)}` : ''}`;
  return page(
    { title: 'Audit log', session, section: PATH, ...(v.status ? { status: v.status } : {}) },
    <section>
      <p>
        {session.principal.role === 'admin'
          ? 'Every change the account’s members and keys made, newest first.'
          : 'The changes you and your keys made, newest first.'}
      </p>
      {v.errors ? (
        <p class="notice error" role="alert">
          The filters are not valid: see the fields marked below.
        </p>
      ) : null}
      <Filters v={v} session={session} />
      <p>
        <a href={exportHref}>Export NDJSON</a>
      </p>
      {v.entries.length === 0 ? (
        v.errors ? null : (
          <p>{v.cursor ? 'No more entries.' : 'No entries match.'}</p>
        )
      ) : (
        <Table caption="Audit entries, newest first">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Actor</th>
              <th scope="col">Channel</th>
              <th scope="col">IP</th>
              <th scope="col">Action</th>
              <th scope="col">Object</th>
            </tr>
          </thead>
          <tbody>
            {v.entries.map((e) => (
              <tr key={e.auditId}>
                <td class="nowrap">
                  <Time ms={e.at} />
                </td>
                <td>
                  <Actor e={e} emails={emails} />
                </td>
                <td>{e.channel}</td>
                <td>{e.ip ? <code>{e.ip}</code> : <span class="muted">—</span>}</td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>
                  <ObjectCell o={e.object} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <NextPage path={PATH} query={q} cursor={v.nextCursor} />
    </section>,
  );
}
