// GET /console/webhooks/new: the create form, empty, with a fresh one-time value (a reload of the
// page its POST answers creates nothing more).
import { route } from './new.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { newFormId } from '../../../../shared/domain/form-once.ts';
import { keyChoices, workflowChoicesFor } from './data.ts';
import { webhookFormPage } from './form.tsx';
import { readForm } from './form-data.ts';

export const handler = consoleHttp(route, async ({ session }) => {
  const [workflows, keys] = await Promise.all([workflowChoicesFor(session.principal), keyChoices(session.principal)]);
  const values = { ...readForm(new URLSearchParams()), nonce: newFormId() };
  return webhookFormPage({ session, values, errors: {}, workflows, keys });
});
