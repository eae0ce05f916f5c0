// GET /api/members
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listMembers } from '../../../shared/domain/members.ts';

export const handler = http(route('GET /api/members'), async ({ principal }) => ok(await listMembers(principal)));
