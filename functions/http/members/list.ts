// GET /api/members
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listMembers } from '../../../shared/domain/members.ts';

export const handler = http(route, async ({ principal }) => ok(await listMembers(principal)));
