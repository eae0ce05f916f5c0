// GET /api/workflows/{id}/schedules
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listSchedules } from '../../../shared/domain/schedules.ts';

export const handler = http(route, async ({ principal, params }) => ok(await listSchedules(principal, params.id)));
