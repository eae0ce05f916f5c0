// GET /console/webhooks/{id}/edit: the edit form, filled in (secrets masked: empty means "keep");
// GET /console/webhooks/{id}/delete: "Delete webhook '<name>'?", whose button POSTs. Both change nothing.
import { route } from './page.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { keyChoices, shownWebhook } from './data.ts';
import { webhookFormPage } from './form.tsx';
import { valuesOf } from './form-data.ts';
import { deleteConfirmPage } from './webhook-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const w = await shownWebhook(session.principal, params.id);
  if (params.page === 'delete') return deleteConfirmPage(session, w);
  const keys = await keyChoices(session.principal, w.createdBy);
  return webhookFormPage({ session, values: valuesOf(w), errors: {}, current: w, keys });
});
