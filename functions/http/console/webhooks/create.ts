// POST /console/webhooks: the create form, checked by the API's own schema and created by the API's
// domain function. Refused: the form again with each error at its field (nothing created). Created:
// the webhook's page with its secret, this once, as this POST's answer (no-store; never in a URL). The
// form's one-time value makes a second send of it (a reload) create nothing (409).
import { route } from './create.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { newFormId, onceForForm } from '../../../../shared/domain/form-once.ts';
import { createWebhook } from '../../../../shared/domain/webhooks.ts';
import { AppError } from '../../../../shared/errors.ts';
import { keyChoices, refusalAt, webhookPageData, workflowChoicesFor } from './data.ts';
import { webhookFormPage } from './form.tsx';
import { createBody, type FormErrors, readForm, type WebhookFormValues } from './form-data.ts';
import { triggerUrl } from './links.ts';
import { alreadySentPage, webhookPage } from './webhook-view.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const p = session.principal;
  const values = readForm(form);
  const again = async (status: number, errors: FormErrors, v: WebhookFormValues = values) => {
    const [workflows, keys] = await Promise.all([workflowChoicesFor(p), keyChoices(p)]);
    // A fresh one-time value: the corrected form is a new send. Secrets typed are not sent back.
    return webhookFormPage({ session, values: { ...v, nonce: newFormId() }, errors, workflows, keys, status });
  };
  const { body, errors } = createBody(values);
  if (!body) return again(400, errors);
  try {
    const w = await onceForForm(p, values.nonce, () => createWebhook(p, body));
    const data = await webhookPageData(p, w.webhookId);
    return webhookPage(session, data, { triggerUrl: triggerUrl(w.webhookId), secret: body.secretKey, created: true, status: 201 });
  } catch (e) {
    if (e instanceof AppError && e.code === 'FORM_ALREADY_SENT') return alreadySentPage(session);
    const refused = refusalAt(e, values);
    return again(refused.status, refused.errors);
  }
});
