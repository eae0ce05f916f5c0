// GET /console/keys/new: the "Create key" form, with a fresh form id (its POST is done once).
import { route } from './new.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { emptyKeyInput, keyFormPage } from './form.tsx';

export const handler = consoleHttp(route, async ({ session }) => keyFormPage(session, emptyKeyInput()));
