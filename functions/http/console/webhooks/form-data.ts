import { randomBytes } from 'node:crypto';
import type * as z from 'zod';
import type { SignatureScheme } from '../../../../shared/domain/read-types.ts';
import type { webhookView } from '../../../../shared/domain/webhooks.ts';
import type { FieldError } from '../../../../shared/errors.ts';
import { fieldErrors } from '../../../../shared/http/middleware/parse-request.ts';
import { CreateWebhookBody, UpdateWebhookBody } from '../../../../shared/schemas/webhooks.ts';

// The webhook form (create and edit) as the API's bodies: what was typed, kept as typed to re-show it;
// the body it makes, checked by the API's own schema; and each error (the schema's, the domain's) at
// the field it is about.

/** How callers authenticate, as the form offers it: the API's modes, with the senders' schemes as one choice. */
export const AUTH_CHOICES = ['api_key', 'hmac', 'sender', 'open'] as const;
export type AuthChoice = (typeof AUTH_CHOICES)[number];
/** The senders the form names (the API's `signatureScheme` other than the default `legacy-hmac`). */
export const SENDERS: { scheme: Exclude<SignatureScheme, 'legacy-hmac'>; name: string }[] = [
  { scheme: 'github', name: 'GitHub' },
  { scheme: 'stripe', name: 'Stripe' },
  { scheme: 'slack', name: 'Slack' },
  { scheme: 'standard-webhooks', name: 'Standard Webhooks' },
];
/** Empty mapping rows a form offers without script, besides the filled ones. */
export const EMPTY_ROWS = 5;
/** At most this many mapping rows are read (the API takes 100 entries). */
const MAX_ROWS = 120;

export type MappingRow = { variable: string; field: string };
export type WebhookFormValues = {
  workflowId: string;
  name: string;
  auth: string;
  apiKeyId: string;
  hmacSecret: string;
  signatureScheme: string;
  senderSecret: string;
  openConfirm: boolean;
  rows: MappingRow[];
  allowedSourceIps: string;
  nonce: string;
};
/** Errors by field: `workflowId`, `name`, `auth`, `apiKeyId`, `hmacSecret`, `signatureScheme`, `senderSecret`, `openConfirm`, `var.<row>`, `field.<row>`, `allowedSourceIps`, `form`. */
export type FormErrors = Record<string, string>;

const text = (form: URLSearchParams, name: string, max = 4096) => (form.get(name) ?? '').slice(0, max);

export function readForm(form: URLSearchParams): WebhookFormValues {
  const vars = form.getAll('mapVar').slice(0, MAX_ROWS);
  const fields = form.getAll('mapField').slice(0, MAX_ROWS);
  const rows = Array.from({ length: Math.max(vars.length, fields.length) }, (_, i) => ({
    variable: (vars[i] ?? '').trim().slice(0, 300),
    field: (fields[i] ?? '').trim().slice(0, 300),
  })).filter((r) => r.variable || r.field);
  return {
    workflowId: text(form, 'workflowId', 100),
    name: text(form, 'name', 1000),
    auth: text(form, 'auth', 20),
    apiKeyId: text(form, 'apiKeyId', 100),
    hmacSecret: text(form, 'hmacSecret', 1000),
    signatureScheme: text(form, 'signatureScheme', 40),
    senderSecret: text(form, 'senderSecret', 1000),
    openConfirm: form.get('openConfirm') === 'yes',
    rows,
    allowedSourceIps: text(form, 'allowedSourceIps', 16_384),
    nonce: text(form, 'nonce', 100),
  };
}

/** An existing webhook as the edit form shows it (its secret never: the fields stay empty, meaning "keep"). */
export function valuesOf(w: ReturnType<typeof webhookView>): WebhookFormValues {
  const scheme = w.signatureScheme ?? '';
  return {
    workflowId: w.workflowId,
    name: w.name,
    auth: w.authMode === 'hmac' ? (scheme && scheme !== 'legacy-hmac' ? 'sender' : 'hmac') : w.authMode,
    apiKeyId: w.apiKeyId ?? '',
    hmacSecret: '',
    signatureScheme: scheme === 'legacy-hmac' ? '' : scheme,
    senderSecret: '',
    openConfirm: w.open,
    rows: Object.entries(w.variableMapping ?? {}).map(([variable, field]) => ({ variable, field })),
    allowedSourceIps: w.allowedSourceIps.join('\n'),
    nonce: '',
  };
}

/** A secret for a webhook whose form left it empty: 32 random bytes, as the scheme takes them. */
export const generatedSecret = (scheme: string) =>
  scheme === 'standard-webhooks' ? `whsec_${randomBytes(32).toString('base64')}` : randomBytes(32).toString('hex');

/** The allowlist's lines: each non-empty one with its line number (1-based), for errors that name it. */
const ipLines = (v: WebhookFormValues) =>
  v.allowedSourceIps
    .split(/\r?\n/)
    .map((entry, i) => ({ entry: entry.trim(), line: i + 1 }))
    .filter((l) => l.entry !== '');

/** Checks the schema cannot make (it sees a mapping as an object): rows without a name, names twice. */
function rowErrors(v: WebhookFormValues): FormErrors {
  const errors: FormErrors = {};
  const seen = new Map<string, number>();
  v.rows.forEach((r, i) => {
    if (!r.variable) errors[`var.${i}`] = 'a variable name is required for this field';
    else if (seen.has(r.variable)) errors[`var.${i}`] = `${r.variable} is mapped twice (row ${(seen.get(r.variable) ?? 0) + 1} too)`;
    else if (!r.field) errors[`field.${i}`] = 'a field of the request body is required for this variable';
    seen.set(r.variable, i);
  });
  return errors;
}

/** The body as JSON would carry it: no key with an undefined value (a spread of one would clear a stored field). */
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const mappingOf = (v: WebhookFormValues) => (v.rows.length ? Object.fromEntries(v.rows.map((r) => [r.variable, r.field])) : undefined);

/** The body's credentials for the chosen mode: the API's fields; the secret typed, or one made (`made`) to show once. */
function credentials(v: WebhookFormValues, errors: FormErrors, keep: boolean) {
  switch (v.auth) {
    case 'api_key':
      if (!v.apiKeyId) errors.apiKeyId = 'choose one of your keys with the WEBHOOK_TRIGGER scope';
      return { apiKeyId: v.apiKeyId || undefined, authMode: 'api_key' as const };
    case 'hmac':
    case 'sender': {
      const scheme = v.auth === 'hmac' ? 'legacy-hmac' : v.signatureScheme;
      if (v.auth === 'sender' && !SENDERS.some((s) => s.scheme === scheme)) errors.signatureScheme = 'choose the sender';
      const typed = v.auth === 'hmac' ? v.hmacSecret : v.senderSecret;
      const made = typed === '' && !keep ? generatedSecret(scheme) : undefined;
      return { secretKey: typed || made, made, signatureScheme: scheme as SignatureScheme, authMode: 'hmac' as const };
    }
    case 'open':
      return { authMode: 'open' as const };
    default:
      errors.auth = 'choose how callers authenticate';
      return {};
  }
}

/** The create form as `POST /api/webhooks`'s body, checked by its schema; `madeSecret`: the one generated, to show once. */
export function createBody(v: WebhookFormValues) {
  const errors = rowErrors(v);
  if (!v.workflowId) errors.workflowId = 'choose the workflow the webhook starts';
  if (v.auth === 'open' && !v.openConfirm) errors.openConfirm = 'tick this box to make a webhook anyone with its URL can trigger';
  const { made, ...creds } = credentials(v, errors, false);
  const parsed = CreateWebhookBody.safeParse(
    defined({
      workflowId: v.workflowId,
      name: v.name,
      ...creds,
      variableMapping: mappingOf(v),
      allowedSourceIps: ipLines(v).map((l) => l.entry),
    }),
  );
  Object.assign(errors, { ...(parsed.success ? {} : errorsAt(v, zodErrors(parsed.error))), ...errors });
  return { body: Object.keys(errors).length === 0 ? parsed.data : undefined, errors, madeSecret: made };
}

/**
 * The edit form as `PUT /api/webhooks/{id}`'s body: an empty secret field keeps the stored secret; a
 * switch from a bound key to a signature clears the key (and then needs a secret, as the API says).
 */
export function updateBody(v: WebhookFormValues, current: ReturnType<typeof webhookView>) {
  const errors = rowErrors(v);
  if (v.auth === 'open' && !current.open && !v.openConfirm)
    errors.openConfirm = 'tick this box to make a webhook anyone with its URL can trigger';
  const { made: _, ...creds } = credentials(v, errors, true);
  const leavesKey = current.apiKeyId !== null && v.auth !== 'api_key' && v.auth !== 'open';
  const parsed = UpdateWebhookBody.safeParse(
    defined({
      name: v.name,
      ...creds,
      ...(leavesKey ? { clearApiKeyId: true } : {}),
      variableMapping: mappingOf(v) ?? null,
      allowedSourceIps: ipLines(v).map((l) => l.entry),
    }),
  );
  Object.assign(errors, { ...(parsed.success ? {} : errorsAt(v, zodErrors(parsed.error))), ...errors });
  return { body: Object.keys(errors).length === 0 ? parsed.data : undefined, errors };
}

/** The schema's errors as the API reports them (`fieldErrors`), a record key's own message rather than "Invalid key in record". */
const zodErrors = (error: z.ZodError): FieldError[] =>
  error.issues.flatMap((i) =>
    i.code === 'invalid_key'
      ? [{ path: i.path.map(String).join('.'), message: i.issues[0]?.message ?? i.message }]
      : fieldErrors({ issues: [i] } as z.ZodError),
  );

/** The API's errors (its paths: `secretKey`, `variableMapping.orderId`, `allowedSourceIps.2`) at the form's fields. */
export function errorsAt(v: WebhookFormValues, found: FieldError[]): FormErrors {
  const errors: FormErrors = {};
  const add = (field: string, message: string) => {
    errors[field] = errors[field] ? `${errors[field]}; ${message}` : message;
  };
  const lines = ipLines(v);
  for (const { path, message } of found) {
    const [head, rest] = [path.split('.')[0] ?? '', path.split('.').slice(1).join('.')];
    if (head === 'allowedSourceIps') {
      const line = rest === '' ? undefined : lines[Number(rest)];
      add('allowedSourceIps', line ? `line ${line.line}: '${line.entry}' ${message}` : message);
    } else if (head === 'variableMapping') {
      const row = v.rows.findIndex((r) => r.variable === rest);
      if (row < 0) add('var.0', message);
      else add(/variable name/.test(message) ? `var.${row}` : `field.${row}`, message);
    } else if (head === 'secretKey') add(v.auth === 'sender' ? 'senderSecret' : 'hmacSecret', message);
    else if (head === 'authMode') add(v.auth === 'open' ? 'openConfirm' : 'auth', message);
    else if (head === 'clearApiKeyId') add('auth', message);
    else if (['workflowId', 'name', 'apiKeyId', 'signatureScheme'].includes(head)) add(head, message);
    else add('form', path && path !== '(body)' ? `${path}: ${message}` : message);
  }
  return errors;
}
