// POST /console/secrets/new: create the secret (the API's schema and domain function), or the form
// again with each error at its field and the value asked for again (never sent back).
import { route } from './create.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { createSecret } from '../../../../../shared/domain/account-secrets.ts';
import { HTTP_STATUS } from '../../../../../shared/http-status.ts';
import { byField, errorsOf, isRefusal } from '../../parts/labelled-field.tsx';
import { createBody, secretDraftOf } from './drafts.ts';
import { SECRET_FIELDS, secretFormPage } from './form-view.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const draft = secretDraftOf(form);
  const value = form.get('value') ?? '';
  const show = (status: number, errors: ReturnType<typeof byField>) =>
    secretFormPage(session, { mode: 'create', draft, errors, status, valueSent: value !== '' });
  const body = createBody(draft, value);
  if (!body.ok) return show(400, byField(body.errors, SECRET_FIELDS));
  try {
    await createSecret(session.principal, body.body);
  } catch (e) {
    if (!isRefusal(e)) throw e;
    const errors = errorsOf(e, SECRET_FIELDS);
    if (e.code === 'SECRET_EXISTS')
      return show(409, { fields: { name: `a secret named ${draft.name} exists: use its "Replace value"` }, form: [] });
    return show(HTTP_STATUS[e.kind], errors);
  }
  return seeOther('/console/secrets');
});
