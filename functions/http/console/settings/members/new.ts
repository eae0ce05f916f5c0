// GET /console/members/new: the "Add member" form (admins), with a fresh form id (its POST is done once).
import { route } from './new.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { emptyMemberInput, memberFormPage } from './form.tsx';

export const handler = consoleHttp(route, async ({ session }) => memberFormPage(session, emptyMemberInput()));
