// POST /console/webhooks/{id}/{action}: "Save" of the edit form (the API's update schema and domain
// function; refused: the form again, errors at their fields, nothing changed), "Enable", "Disable",
// and the confirmed "Delete webhook"; then 303 to the webhook's page (after a delete: the list).
import { route } from './action.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { deleteWebhook, updateWebhook } from '../../../../shared/domain/webhooks.ts';
import { keyChoices, refusalAt, shownWebhook } from './data.ts';
import { webhookFormPage } from './form.tsx';
import { type FormErrors, readForm, updateBody } from './form-data.ts';

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  const p = session.principal;
  const page = `/console/webhooks/${params.id}`;
  if (params.action === 'delete') {
    await deleteWebhook(p, params.id);
    return seeOther('/console/webhooks');
  }
  if (params.action !== 'edit') {
    await updateWebhook(p, params.id, { enabled: params.action === 'enable' });
    return seeOther(page);
  }
  const current = await shownWebhook(p, params.id);
  const values = { ...readForm(form), workflowId: current.workflowId };
  const again = async (status: number, errors: FormErrors) => {
    // The workflow is not on the edit form: what is about it is said at the top.
    const { workflowId, ...rest } = errors;
    const shown = workflowId ? { ...rest, form: rest.form ?? workflowId } : errors;
    return webhookFormPage({ session, values, errors: shown, current, keys: await keyChoices(p, current.createdBy), status });
  };
  const { body, errors } = updateBody(values, current);
  if (!body) return again(400, errors);
  try {
    await updateWebhook(p, params.id, body);
  } catch (e) {
    const refused = refusalAt(e, values);
    return again(refused.status, refused.errors);
  }
  return seeOther(page);
});
