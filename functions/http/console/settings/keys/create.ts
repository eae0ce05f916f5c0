// POST /console/keys: the "Create key" form. Refused: the form again with the user's input and each
// error at its field (400), nothing made. Accepted: the token on this answer (never a redirect, so it
// is in no URL), once: the form's id is claimed first, so a browser's re-POST (a reload) makes no second key.
import { route } from './create.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { createKey } from '../../../../../shared/domain/keys.ts';
import { onceForForm } from '../../../../../shared/domain/form-once.ts';
import { fieldErrors } from '../../../../../shared/http/middleware/parse-request.ts';
import { CreateKeyBody } from '../../../../../shared/schemas/identity.ts';
import { keyCreatedPage, keyFormPage, type KeyInput } from './form.tsx';
import { errorsOf, numberOrText } from '../../parts/people-fields.tsx';

const FIELD_CHARS = 1000;

export const handler = consoleHttp(route, async ({ session, form }) => {
  const input: KeyInput = {
    name: (form.get('name') ?? '').slice(0, FIELD_CHARS),
    scopes: form.getAll('scopes').slice(0, 10),
    validityDays: (form.get('validityDays') ?? '').slice(0, FIELD_CHARS),
    formId: (form.get('formId') ?? '').slice(0, 100),
  };
  const parsed = CreateKeyBody.safeParse({ name: input.name, scopes: input.scopes, validityDays: numberOrText(input.validityDays) });
  if (!parsed.success) return keyFormPage(session, input, errorsOf(fieldErrors(parsed.error)), 400);
  const key = await onceForForm(session.principal, input.formId, () => createKey(session.principal, parsed.data));
  return keyCreatedPage(session, key);
});
