import type { FieldError } from '../../../../../shared/errors.ts';
import { CreateSecretBody, UpdateSecretBody } from '../../../../../shared/schemas/secrets.ts';
import type { SecretDraft } from './form-view.tsx';

// The secrets forms as sent, and the API's bodies they stand for (checked by the API's own schemas).

const lines = (s: string) =>
  s
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

export const secretDraftOf = (form: URLSearchParams, name?: string): SecretDraft => ({
  name: name ?? (form.get('name') ?? '').trim(),
  allowedHosts: form.get('allowedHosts') ?? '',
  members: form.get('members') === 'use' ? 'use' : 'none',
});

/** A host list's errors name the line and the entry (`allowedHosts.2` is line 3). */
function issues(error: { issues: { path: PropertyKey[]; message: string }[] }, hosts: string[]): FieldError[] {
  return error.issues.map((i) => {
    const [field, index] = i.path;
    if (field === 'allowedHosts' && typeof index === 'number')
      return { path: 'allowedHosts', message: `line ${index + 1} (${hosts[index]}): ${i.message}` };
    return { path: i.path.map(String).join('.'), message: i.message };
  });
}

export function createBody(d: SecretDraft, value: string) {
  const hosts = lines(d.allowedHosts);
  const parsed = CreateSecretBody.safeParse({ name: d.name, value, members: d.members, ...(hosts.length ? { allowedHosts: hosts } : {}) });
  return parsed.success ? ({ ok: true, body: parsed.data } as const) : ({ ok: false, errors: issues(parsed.error, hosts) } as const);
}

/** An empty value keeps the stored one; the rules are sent as the form shows them (no hosts: no binding). */
export function updateBody(d: SecretDraft, value: string) {
  const hosts = lines(d.allowedHosts);
  const parsed = UpdateSecretBody.safeParse({ ...(value ? { value } : {}), members: d.members, allowedHosts: hosts.length ? hosts : null });
  return parsed.success ? ({ ok: true, body: parsed.data } as const) : ({ ok: false, errors: issues(parsed.error, hosts) } as const);
}
