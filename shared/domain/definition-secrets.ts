import { listSecrets, membersOf } from '../db/entities/account-secret.ts';
import type { Notification, WorkflowDefinition } from '../engine/definition.ts';
import { stepsWithPaths } from '../engine/every-step.ts';
import type { HttpRequestStep } from '../engine/steps/http-request.ts';
import { type ContainerStep, isContainerType, type NestedStep, type Step, stepModule } from '../engine/steps/index.ts';
import { hostAllowed, referencedSecret, SECRET_REFERENCE as ACCOUNT_SECRET, stepSecretNames } from '../engine/secret-refs.ts';
import { badRequest, type FieldError, forbidden, validationFailed } from '../errors.ts';

/**
 * Secrets in workflow definitions are write-only. A view (every console workflow read, for every
 * member and admin alike) shows a stored secret as a mask: `••••` followed by its last four
 * characters when the secret is at least 16 characters long, or `••••` alone for a shorter one. An
 * update keeps the stored value when it sends back exactly the mask the view showed, or (for a
 * notification's signing secret) leaves the secret out.
 *
 * Secrets are: every notification's `secret`; and in the request a step sends (an `http_request`, a
 * `wait_for_callback`'s `request`: its module's `request`) the values of the
 * credential headers (`authorization`, `cookie`, `proxy-authorization`, `x-api-key`) and of every
 * header the step lists in `secretHeaders`. A header value that is only a reference to an account
 * secret, `{% $secrets.NAME %}` (optionally after an auth scheme: `{% 'Bearer ' & $secrets.NAME %}`),
 * holds no secret itself and is shown as written; so is a notification `secret` that names an account
 * secret (`{% $secrets.NAME %}`). Whatever a view shows, sent back unchanged, keeps what is stored.
 */
export const MASK = '••••';
export const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key'] as const;

const SECRET_REFERENCE = /^\{%\s*(?:(['"])(?:Bearer|Basic|Token|Bot) \1\s*&\s*)?\$secrets\.[A-Za-z_][A-Za-z0-9_]*\s*%\}$/i;

export const mask = (secret: string) => (secret.length >= 16 ? `${MASK}${secret.slice(-4)}` : MASK);
export const isMask = (value: string) => value.startsWith(MASK);

const isSecretHeader = (step: Pick<HttpRequestStep, 'secretHeaders'>, name: string) => {
  const n = name.toLowerCase();
  return (CREDENTIAL_HEADERS as readonly string[]).includes(n) || (step.secretHeaders ?? []).some((h) => h.toLowerCase() === n);
};
const hidden = (step: Pick<HttpRequestStep, 'secretHeaders'>, name: string, value: string) =>
  isSecretHeader(step, name) && !SECRET_REFERENCE.test(value);

/** The request a step sends (its module's `request`: an http_request's own fields, a wait_for_callback's `request`): same fields, same secrets. */
type Request = Pick<HttpRequestStep, 'url' | 'headers' | 'secretHeaders' | 'body'>;
const requestAt = (s: Step | NestedStep) => stepModule(s).request;
const requestOf = (s: Step | NestedStep): Request | undefined => {
  const at = requestAt(s);
  if (!at) return undefined;
  let v: unknown = s;
  for (const k of at) v = (v as Record<string, unknown> | undefined)?.[k];
  return v as Request | undefined;
};
const setAt = (v: unknown, path: readonly string[], value: unknown): unknown => {
  const [k, ...rest] = path;
  return k === undefined ? value : { ...(v as object), [k]: setAt((v as Record<string, unknown>)[k], rest, value) };
};
const withHeaders = <S extends Step | NestedStep>(s: S, headers: Record<string, string>): S => {
  const r = requestOf(s);
  return r ? (setAt(s, requestAt(s) ?? [], { ...r, headers }) as S) : s;
};
/** Where a step's request is, below the step's path. */
const requestPath = (s: Step | NestedStep) => (requestAt(s) ?? []).map((k) => `.${k}`).join('');
/** Every step with its path (`steps.<i>`, or `steps.<i>.steps.<j>` inside a container): secrets are kept the same way at every level. */
const allSteps = (def: WorkflowDefinition | undefined) => (def ? stepsWithPaths(def).map(({ step, path }) => ({ s: step, path })) : []);
/** `f` applied to every step, nested ones included. */
const mapSteps = (def: WorkflowDefinition, f: (s: Step | NestedStep, path: string) => Step | NestedStep): WorkflowDefinition['steps'] =>
  def.steps.map((s, i) => {
    const top = f(s, `steps.${i}`) as Step;
    if (!isContainerType(top.type)) return top;
    const container = top as ContainerStep;
    return { ...container, steps: container.steps.map((n, j) => f(n, `steps.${i}.steps.${j}`) as NestedStep) };
  });
/** A notification's signing secret as views show it: a reference to an account secret as written, a literal masked. */
const shownSecret = (secret: string) => (ACCOUNT_SECRET.test(secret) ? secret : mask(secret));

/** The definition as views show it: every secret masked. */
export function maskDefinition(def: WorkflowDefinition): WorkflowDefinition {
  return {
    ...def,
    steps: mapSteps(def, (s) => {
      const r = requestOf(s);
      return r?.headers
        ? withHeaders(s, Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, hidden(r, k, v) ? mask(v) : v])))
        : s;
    }),
    ...(def.notifications ? { notifications: def.notifications.map((n) => ({ ...n, secret: shownSecret(n.secret as string) })) } : {}),
  };
}

/** The stored notification a sent one stands for: the same position and URL, else the only one with that URL. */
function storedNotification(n: Notification, i: number, stored: readonly Notification[]): Notification | undefined {
  if (stored[i]?.url === n.url) return stored[i];
  const sameUrl = stored.filter((s) => s.url === n.url);
  return sameUrl.length === 1 ? sameUrl[0] : undefined;
}

/**
 * Put the stored secrets back where an update sent their masks (or left a notification's secret
 * out). `stored` is the current definition (undefined on create). A mask that matches no stored
 * secret, or a missing secret with nothing to keep, is a 400 `VALIDATION_FAILED` naming the field.
 */
export function restoreSecrets(next: WorkflowDefinition, stored: WorkflowDefinition | undefined, base = 'definition'): WorkflowDefinition {
  const errors: FieldError[] = [];
  const storedSteps = new Map(allSteps(stored).flatMap(({ s }) => (requestOf(s) ? [[s.id, requestOf(s) as Request] as const] : [])));
  const steps = mapSteps(next, (s, at) => {
    const r = requestOf(s);
    if (!r?.headers) return s;
    const old = storedSteps.get(s.id);
    const headers = Object.fromEntries(
      Object.entries(r.headers).map(([name, value]) => {
        if (!isMask(value)) return [name, value];
        const match =
          old && Object.entries(old.headers ?? {}).find(([n, v]) => n.toLowerCase() === name.toLowerCase() && hidden(old, n, v));
        if (match && mask(match[1]) === value) return [name, match[1]];
        errors.push({
          path: `${base}.${at}${requestPath(s)}.headers.${name}`,
          message: 'a masked value keeps the stored secret only where the view showed it; send the new value',
        });
        return [name, value];
      }),
    );
    return withHeaders(s, headers);
  });
  const notifications = next.notifications?.map((n, i) => {
    if (n.secret !== undefined && !isMask(n.secret)) return n;
    const old = stored && storedNotification(n, i, stored.notifications ?? []);
    if (old && (n.secret === undefined || mask(old.secret as string) === n.secret)) return { ...n, secret: old.secret };
    errors.push({
      path: `${base}.notifications.${i}.secret`,
      message: old || n.secret !== undefined ? 'does not match the stored secret; send the new whsec_ secret' : 'required: a whsec_ secret',
    });
    return n;
  });
  if (errors.length) throw validationFailed(errors);
  return { ...next, steps, ...(notifications ? { notifications } : {}) };
}

/**
 * The account secrets a definition references may be used by whoever saves it, and only where they
 * may go (docs/secrets.md "Account secrets"). A member (anyone but an admin) may reference only secrets whose
 * `members` is `use`: 403 `SECRET_NOT_ALLOWED` otherwise. An http_request whose URL is literal may
 * carry only secrets whose `allowedHosts` (if any) allow its host: 400 `SECRET_NOT_ALLOWED` with the
 * URL's path otherwise (a computed URL is checked when the step runs). A name the account does not
 * have is not checked here: the step fails `SECRET_NOT_FOUND` when it runs. One query, and none for a
 * definition that references no secret.
 */
export async function checkSecretUse(actor: { accountId: string; role?: string }, def: WorkflowDefinition, base = 'definition') {
  const steps = allSteps(def)
    .flatMap(({ s, path }) => {
      const r = requestOf(s);
      return r ? [{ s: r, path: `${path}${requestPath(s)}`, names: stepSecretNames(r) }] : [];
    })
    .filter((x) => x.names.length);
  const notified = (def.notifications ?? []).flatMap((n) => referencedSecret(n.secret ?? '') ?? []);
  if (steps.length === 0 && notified.length === 0) return;
  const secrets = new Map((await listSecrets(actor.accountId)).map((x) => [x.name, x]));
  if (actor.role !== 'admin') {
    const adminOnly = [...new Set([...steps.flatMap((x) => x.names), ...notified])].filter((n) => {
      const secret = secrets.get(n);
      return secret && membersOf(secret) === 'none';
    });
    if (adminOnly.length)
      throw forbidden(
        'SECRET_NOT_ALLOWED',
        `Only admins may save a definition that uses ${adminOnly.sort().join(', ')} (the secret says members: none).`,
      );
  }
  const errors: FieldError[] = [];
  for (const { s, path, names } of steps) {
    if (s.url.includes('{%') || !URL.canParse(s.url)) continue;
    const host = new URL(s.url).hostname;
    for (const n of names) {
      const hosts = secrets.get(n)?.allowedHosts;
      if (hosts && !hostAllowed(hosts, host))
        errors.push({ path: `${base}.${path}.url`, message: `$secrets.${n} may be sent only to ${hosts.join(', ')}, not ${host}` });
    }
  }
  if (errors.length)
    throw badRequest('SECRET_NOT_ALLOWED', 'A secret the definition uses may not be sent to the host of a request.', errors);
}
