// GET /console/members: the account's members (read-only for members; admins: "Add member" and each member's actions).
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { listMembers } from '../../../../../shared/domain/members.ts';
import { membersPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session }) => membersPage(session, (await listMembers(session.principal)).items));
