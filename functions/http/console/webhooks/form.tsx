import type { ComponentChildren } from 'preact';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import type { webhookView } from '../../../../shared/domain/webhooks.ts';
import { EMPTY_ROWS, type FormErrors, SENDERS, type WebhookFormValues } from './form-data.ts';

// The webhook form, to create (`/console/webhooks/new`, POST /console/webhooks) and to edit
// (`/console/webhooks/{id}/edit`). Works without script: every choice's fields are on the page, the
// mapping has empty rows to fill; console.js adds "Add row". Each error sits under its field
// (`aria-describedby`, `aria-invalid`), the first one focused.

export type KeyChoice = { id: string; name: string; mine: boolean };
export type FormContext = {
  session: ConsoleSession;
  values: WebhookFormValues;
  errors: FormErrors;
  status?: number;
  /** Create: the workflows to choose from. Edit: the webhook being edited. */
  workflows?: { workflowId: string; name: string }[];
  current?: ReturnType<typeof webhookView> & { workflowName: string };
  keys: KeyChoice[];
};

/** The fields in the page's order: the first with an error gets the focus. */
const ORDER = ['form', 'workflowId', 'name', 'auth', 'apiKeyId', 'hmacSecret', 'signatureScheme', 'senderSecret', 'openConfirm'];
const firstError = (errors: FormErrors, rows: number) =>
  [...ORDER, ...Array.from({ length: rows }, (_, i) => [`var.${i}`, `field.${i}`]).flat(), 'allowedSourceIps'].find((k) => errors[k]);

const idOf = (key: string) => `wh-${key.replace('.', '-')}`;

/** What an input carries for its error and hint, and the focus when its error is the first. */
function described(key: string, errors: FormErrors, focus: string | undefined, hint?: boolean) {
  const ids = [hint ? `${idOf(key)}-hint` : '', errors[key] ? `${idOf(key)}-error` : ''].filter(Boolean).join(' ');
  return {
    id: idOf(key),
    'aria-invalid': errors[key] ? ('true' as const) : undefined,
    'aria-describedby': ids || undefined,
    autofocus: focus === key ? true : undefined,
  };
}

const ErrorText = ({ at, errors }: { at: string; errors: FormErrors }) =>
  errors[at] ? (
    <small id={`${idOf(at)}-error`} class="hint error">
      {errors[at]}
    </small>
  ) : null;
const Hint = ({ at, children }: { at: string; children: ComponentChildren }) => (
  <small id={`${idOf(at)}-hint`} class="hint muted">
    {children}
  </small>
);

function Choice(props: {
  value: string;
  label: string;
  v: WebhookFormValues;
  focus: boolean;
  invalid: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class="auth-choice">
      <label>
        <input
          type="radio"
          name="auth"
          value={props.value}
          checked={props.v.auth === props.value}
          autofocus={props.focus || undefined}
          aria-invalid={props.invalid ? 'true' : undefined}
          aria-describedby={props.invalid ? 'wh-auth-error' : undefined}
        />
        {props.label}
      </label>
      <div class="auth-detail">{props.children}</div>
    </div>
  );
}

function Auth({ ctx, focus }: { ctx: FormContext; focus: string | undefined }) {
  const { values: v, errors, keys, current } = ctx;
  const secretHint = current
    ? 'Leave empty to keep the current secret.'
    : 'Leave empty to have one made for you: it is shown once, after saving.';
  return (
    <fieldset>
      <legend>How callers authenticate</legend>
      <ErrorText at="auth" errors={errors} />
      <Choice value="api_key" label="An API key of mine" v={v} focus={focus === 'auth' && v.auth === ''} invalid={Boolean(errors.auth)}>
        <label for={idOf('apiKeyId')}>API key</label>
        <select name="apiKeyId" {...described('apiKeyId', errors, focus, true)}>
          <option value="">Choose a key…</option>
          {keys.map((k) => (
            <option key={k.id} value={k.id} selected={v.apiKeyId === k.id}>
              {`${k.name} (${k.id})${k.mine ? '' : ' · the creator’s'}`}
            </option>
          ))}
        </select>
        <Hint at="apiKeyId">
          {keys.length ? 'Active keys with the WEBHOOK_TRIGGER scope. ' : 'You have no active key with the WEBHOOK_TRIGGER scope. '}
          Callers send it as <code>Authorization: Bearer</code>. <a href="/console/keys">API keys</a>
        </Hint>
        <ErrorText at="apiKeyId" errors={errors} />
      </Choice>
      <Choice value="hmac" label="A shared secret (HMAC)" v={v} focus={false} invalid={Boolean(errors.auth)}>
        <label for={idOf('hmacSecret')}>Shared secret</label>
        <input
          type="password"
          name="hmacSecret"
          autocomplete="new-password"
          placeholder={current?.hasSecretKey ? '•••••••• (unchanged)' : ''}
          {...described('hmacSecret', errors, focus, true)}
        />
        <Hint at="hmacSecret">
          At least 16 characters. Callers sign the body: <code>X-Webhook-Signature: sha256=&lt;HMAC-SHA256 hex&gt;</code>. {secretHint}
        </Hint>
        <ErrorText at="hmacSecret" errors={errors} />
      </Choice>
      <Choice
        value="sender"
        label="A sender’s signature (GitHub, Stripe, Slack, Standard Webhooks)"
        v={v}
        focus={false}
        invalid={Boolean(errors.auth)}
      >
        <label for={idOf('signatureScheme')}>Sender</label>
        <select name="signatureScheme" {...described('signatureScheme', errors, focus)}>
          <option value="">Choose the sender…</option>
          {SENDERS.map((s) => (
            <option key={s.scheme} value={s.scheme} selected={v.signatureScheme === s.scheme}>
              {s.name}
            </option>
          ))}
        </select>
        <ErrorText at="signatureScheme" errors={errors} />
        <label for={idOf('senderSecret')}>Sender’s secret</label>
        <input
          type="password"
          name="senderSecret"
          autocomplete="new-password"
          placeholder={current?.hasSecretKey ? '•••••••• (unchanged)' : ''}
          {...described('senderSecret', errors, focus, true)}
        />
        <Hint at="senderSecret">
          The signing secret the sender shows you (Standard Webhooks: <code>whsec_…</code>). {secretHint}
        </Hint>
        <ErrorText at="senderSecret" errors={errors} />
      </Choice>
      <Choice value="open" label="Open: no authentication" v={v} focus={false} invalid={Boolean(errors.auth)}>
        <p class="notice" id="wh-open-warning">
          <strong>Warning:</strong> anyone who has the URL of an open webhook can start runs of its workflow. Choose this only for a sender
          that can neither send a key nor sign, and limit it to the sender’s addresses below.
        </p>
        <label>
          <input
            type="checkbox"
            name="openConfirm"
            value="yes"
            checked={v.openConfirm}
            {...described('openConfirm', errors, focus)}
            aria-describedby={['wh-open-warning', errors.openConfirm ? 'wh-openConfirm-error' : ''].filter(Boolean).join(' ')}
          />
          I understand: anyone with the URL can start runs
        </label>
        <ErrorText at="openConfirm" errors={errors} />
      </Choice>
    </fieldset>
  );
}

function Mapping({ ctx, focus }: { ctx: FormContext; focus: string | undefined }) {
  const { values: v, errors } = ctx;
  const rows = [...v.rows, ...Array.from({ length: EMPTY_ROWS }, () => ({ variable: '', field: '' }))];
  return (
    <fieldset>
      <legend>Variable mapping</legend>
      <small class="hint muted" id="wh-mapping-hint">
        Each row sets a workflow variable from a top-level field of the request body. With no rows, the body’s top-level strings, numbers
        and booleans become variables of the same names.
      </small>
      <table class="mapping">
        <thead>
          <tr>
            <th scope="col">Variable</th>
            <th scope="col">
              <span class="visually-hidden">from</span>
            </th>
            <th scope="col">Field of the request body</th>
          </tr>
        </thead>
        <tbody id="wh-mapping-rows">
          {rows.map((r, i) => (
            <tr key={String(i)}>
              <td>
                <label class="visually-hidden" for={idOf(`var.${i}`)}>{`Variable ${i + 1}`}</label>
                <input type="text" name="mapVar" value={r.variable} autocomplete="off" {...described(`var.${i}`, errors, focus)} />
                <ErrorText at={`var.${i}`} errors={errors} />
              </td>
              <td aria-hidden="true">←</td>
              <td>
                <label class="visually-hidden" for={idOf(`field.${i}`)}>{`Field ${i + 1}`}</label>
                <input type="text" name="mapField" value={r.field} autocomplete="off" {...described(`field.${i}`, errors, focus)} />
                <ErrorText at={`field.${i}`} errors={errors} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" class="secondary outline" data-add-row="#wh-mapping-rows" hidden>
        Add row
      </button>
    </fieldset>
  );
}

/** The whole form page. */
export function webhookFormPage(ctx: FormContext) {
  const { session, values: v, errors, current } = ctx;
  const focus = firstError(errors, v.rows.length + EMPTY_ROWS);
  const action = current ? `/console/webhooks/${current.id}/edit` : '/console/webhooks';
  return page(
    {
      title: current ? `Edit webhook ${current.name}` : 'Create webhook',
      session,
      section: '/console/webhooks',
      status: ctx.status ?? 200,
    },
    <form method="post" action={action} class="webhook-form" novalidate>
      <Csrf session={session} />
      {current ? null : <input type="hidden" name="nonce" value={v.nonce} />}
      {Object.keys(errors).length ? (
        <p
          role="alert"
          class="notice error"
          id={idOf('form')}
          tabindex={focus === 'form' ? -1 : undefined}
          autofocus={focus === 'form' || undefined}
        >
          {errors.form ?? 'The webhook was not saved: see the fields marked below.'}
        </p>
      ) : null}
      {current ? (
        <p>
          Workflow: <a href={`/console/workflows/${current.workflowId}`}>{current.workflowName}</a>{' '}
          <span class="muted">(a webhook stays with its workflow)</span>
        </p>
      ) : (
        <>
          <label for={idOf('workflowId')}>Workflow</label>
          <select name="workflowId" {...described('workflowId', errors, focus)}>
            <option value="">Choose a workflow…</option>
            {(ctx.workflows ?? []).map((w) => (
              <option key={w.workflowId} value={w.workflowId} selected={v.workflowId === w.workflowId}>
                {w.name}
              </option>
            ))}
          </select>
          <ErrorText at="workflowId" errors={errors} />
        </>
      )}
      <label for={idOf('name')}>Name</label>
      <input type="text" name="name" value={v.name} maxLength={200} autocomplete="off" {...described('name', errors, focus)} />
      <ErrorText at="name" errors={errors} />
      <Auth ctx={ctx} focus={focus} />
      <Mapping ctx={ctx} focus={focus} />
      <label for={idOf('allowedSourceIps')}>Source IP allowlist</label>
      <textarea name="allowedSourceIps" rows={4} {...described('allowedSourceIps', errors, focus, true)}>
        {v.allowedSourceIps}
      </textarea>
      <Hint at="allowedSourceIps">One IPv4 or IPv6 address or CIDR range per line; empty: any address.</Hint>
      <ErrorText at="allowedSourceIps" errors={errors} />
      <div class="actions">
        <button type="submit">{current ? 'Save' : 'Create webhook'}</button>
        <a href={current ? `/console/webhooks/${current.id}` : '/console/webhooks'}>Cancel</a>
      </div>
    </form>,
  );
}
