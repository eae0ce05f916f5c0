// POST /console/secrets/{name}/edit: replace the value (when one is typed) and set the rules, as the
// API's PUT does; POST /console/secrets/{name}/delete: delete it. 404 for a name the account has not.
import { route } from './action.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { removeSecret, updateSecret } from '../../../../../shared/domain/account-secrets.ts';
import { HTTP_STATUS } from '../../../../../shared/http-status.ts';
import { byField, errorsOf, isRefusal } from '../../parts/labelled-field.tsx';
import { secretDraftOf, updateBody } from './drafts.ts';
import { SECRET_FIELDS, secretFormPage } from './form-view.tsx';

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  if (params.action === 'delete') {
    await removeSecret(session.principal, params.name);
    return seeOther('/console/secrets');
  }
  const draft = secretDraftOf(form, params.name);
  const show = (status: number, errors: ReturnType<typeof byField>) => secretFormPage(session, { mode: 'edit', draft, errors, status });
  const body = updateBody(draft, form.get('value') ?? '');
  if (!body.ok) return show(400, byField(body.errors, SECRET_FIELDS));
  try {
    await updateSecret(session.principal, params.name, body.body);
  } catch (e) {
    if (!isRefusal(e) || e.kind === 'not_found') throw e;
    return show(HTTP_STATUS[e.kind], errorsOf(e, SECRET_FIELDS));
  }
  return seeOther('/console/secrets');
});
