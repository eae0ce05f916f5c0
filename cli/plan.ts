// `flowgate plan`, `apply` and `export`: a folder of workflow files against the account's workflows, by key.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { LoadedFile } from './files.ts';
import { apiUrl, call, type Session } from './session.ts';

type Content = { name: string; description: string | null; recovery: boolean; editors: string[]; definition: unknown };
/** One line of a plan: what the server said of a file (a dry run), or a workflow the folder no longer has. */
export type PlanItem = {
  key: string;
  file?: string;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  workflowId: string | null;
  changed: string[];
  before: Content | null;
  after: Content | null;
  version: number | null;
};
type View = { id: string; name: string; description: string | null; definition: unknown; recovery: boolean; editors: string[] };
type WorkflowView = View & { code: { key: string; origin: string | null } | null; version: number };

const byKey = (key: string) => `/api/workflow-keys/${encodeURIComponent(key)}`;

/** Where a folder's files live, for the console: the repository (its remote without credentials) and the path in it. */
export function originOf(file: string): string {
  const dir = dirname(resolve(file));
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const top = git('rev-parse', '--show-toplevel');
    let repo = top;
    try {
      repo = git('remote', 'get-url', 'origin').replace(/\/\/[^/@]*@/, '//');
    } catch {
      // no remote: the checkout's folder
    }
    return `${repo} ${relative(top, resolve(file))}`.slice(0, 500);
  } catch {
    return resolve(file).slice(0, 500);
  }
}

/** The request body of a file: its settings as written (not its key or `$schema`), and where it lives. */
function bodyOf(f: LoadedFile, origin: string | undefined) {
  const { key: _key, $schema: _schema, ...settings } = f.raw;
  return { ...settings, origin: origin ?? originOf(f.file) };
}

/** Every workflow of the account (the list's pages). */
export async function allWorkflows(session: Session): Promise<WorkflowView[]> {
  const all: WorkflowView[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = (await call(session, 'GET', `/api/workflows?limit=100${q}`)) as { items: WorkflowView[]; nextCursor: string | null };
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** What applying the files would do (the server's dry runs), and with `prune` the workflows managed by code that no file has. */
export async function plan(session: Session, files: readonly LoadedFile[], opts: { prune: boolean; origin?: string }): Promise<PlanItem[]> {
  const items: PlanItem[] = [];
  for (const f of files) {
    const res = (await call(session, 'PUT', `${byKey(f.workflow.key)}?dryRun=true`, bodyOf(f, opts.origin))) as PlanItem;
    items.push({ ...res, file: f.file });
  }
  if (opts.prune) {
    const keys = new Set(files.map((f) => f.workflow.key));
    for (const w of await allWorkflows(session))
      if (w.code && !keys.has(w.code.key))
        items.push({
          key: w.code.key,
          action: 'delete',
          workflowId: w.id,
          changed: [],
          before: contentOf(w),
          after: null,
          version: w.version,
        });
  }
  return items;
}

const contentOf = (w: View): Content => ({
  name: w.name,
  description: w.description,
  recovery: w.recovery,
  editors: w.editors,
  definition: w.definition,
});

/** Carry out a plan's changes; each answer as the server gave it. */
export async function apply(
  session: Session,
  files: readonly LoadedFile[],
  items: readonly PlanItem[],
  origin?: string,
): Promise<PlanItem[]> {
  const done: PlanItem[] = [];
  for (const item of items) {
    if (item.action === 'unchanged') done.push(item);
    else if (item.action === 'delete') {
      await call(session, 'DELETE', byKey(item.key));
      done.push(item);
    } else {
      const f = files.find((x) => x.workflow.key === item.key) as LoadedFile;
      done.push({ ...((await call(session, 'PUT', byKey(item.key), bodyOf(f, origin))) as PlanItem), file: f.file });
    }
  }
  return done;
}

const text = (c: Content | null) => (c ? `${JSON.stringify(c, null, 2)}\n` : '');

/** A unified diff of what is stored and what the file says (secrets masked on both sides). */
export function diffOf(item: PlanItem): string {
  const patch = createTwoFilesPatch(`${item.key} (stored)`, item.file ?? item.key, text(item.before), text(item.after), '', '', {
    context: 3,
  });
  return patch
    .split('\n')
    .filter((l) => !l.startsWith('====') && !l.startsWith('Index:'))
    .join('\n')
    .trimEnd();
}

const SIGN = { create: '+', update: '~', unchanged: '=', delete: '-' } as const;

/** A plan as a person reads it: one line a workflow, each update's diff, then the counts. */
export function renderPlan(items: readonly PlanItem[], verb = 'Plan'): string {
  const lines: string[] = [];
  for (const i of items) {
    const where = i.file ? ` (${i.file})` : i.workflowId ? ` (${i.workflowId})` : '';
    const what = i.action === 'update' ? `: ${i.changed.join(', ')}` : '';
    lines.push(`${SIGN[i.action]} ${i.action} ${i.key}${where}${what}`);
    if (i.action === 'update' && !(i.changed.length === 1 && i.changed[0] === 'key'))
      lines.push(
        ...diffOf(i)
          .split('\n')
          .map((l) => `    ${l}`),
      );
  }
  const count = (a: PlanItem['action']) => items.filter((i) => i.action === a).length;
  lines.push(
    `${verb}: ${count('create')} to create, ${count('update')} to update, ${count('delete')} to delete, ${count('unchanged')} unchanged.`,
  );
  return lines.join('\n');
}

export const hasChanges = (items: readonly PlanItem[]) => items.some((i) => i.action !== 'unchanged');

/** A key from a name, for a workflow made without one: lowercase letters, digits and dashes, unique among `taken`. */
export function keyFor(name: string, taken: Set<string>): string {
  const base =
    name
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 56) || 'workflow';
  let key = base;
  for (let n = 2; taken.has(key); n++) key = `${base}-${n}`;
  taken.add(key);
  return key;
}

/**
 * Write the account's workflows as files, `<key>.json`: a workflow made in the console or the API gets
 * a key from its name and is taken under code with it (the server records the key; no version is made).
 */
export async function exportTo(session: Session, dir: string, opts: { origin?: string }): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const workflows = await allWorkflows(session);
  const taken = new Set(workflows.flatMap((w) => (w.code ? [w.code.key] : [])));
  const written: string[] = [];
  for (const w of workflows) {
    const key = w.code?.key ?? keyFor(w.name, taken);
    const file = join(dir, `${key}.json`);
    const content = {
      $schema: apiUrl(session.url, '/api/v1/schemas/workflow.json'),
      key,
      name: w.name,
      ...(w.description !== null ? { description: w.description } : {}),
      ...(w.recovery ? { recovery: true } : {}),
      ...(w.editors.length ? { editors: w.editors } : {}),
      definition: w.definition,
    };
    if (!w.code) {
      const { $schema: _s, key: _k, ...settings } = content;
      await call(session, 'PUT', byKey(key), { ...settings, adopt: w.id, origin: opts.origin ?? originOf(file) });
    }
    writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
    written.push(file);
  }
  return written;
}
