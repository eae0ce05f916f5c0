// GET /console/secrets/{name}/edit ("Replace value": the rules as they are, never the value) and
// GET /console/secrets/{name}/delete ("Delete secret 'NAME'?"); 404 for a name the account has not.
import { route } from './page.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { requireConsoleSecret } from '../../../../../shared/domain/secret-console.ts';
import { confirmDeletePage } from '../../parts/confirm-delete-view.tsx';
import { noErrors } from '../../parts/labelled-field.tsx';
import { secretFormPage } from './form-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) => {
  const s = await requireConsoleSecret(session.principal, params.name);
  if (params.action === 'delete')
    return confirmDeletePage(session, {
      section: '/console/secrets',
      what: `secret '${s.name}'`,
      action: `/console/secrets/${encodeURIComponent(s.name)}/delete`,
      back: '/console/secrets',
      detail: s.usedBy.length
        ? `It is used by ${s.usedBy.map((u) => `${u.workflowName} (${u.where})`).join(', ')}: their runs fail where they read it.`
        : 'No workflow refers to it.',
    });
  return secretFormPage(session, {
    mode: 'edit',
    draft: { name: s.name, allowedHosts: (s.allowedHosts ?? []).join('\n'), members: s.members },
    errors: noErrors,
  });
});
