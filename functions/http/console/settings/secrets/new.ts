// GET /console/secrets/new: the empty "Create secret" form (admins; a member gets 403).
import { route } from './new.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { noErrors } from '../../parts/labelled-field.tsx';
import { secretFormPage } from './form-view.tsx';

export const handler = consoleHttp(route, async ({ session }) =>
  secretFormPage(session, { mode: 'create', draft: { name: '', allowedHosts: '', members: 'none' }, errors: noErrors }),
);
