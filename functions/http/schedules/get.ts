// GET /api/schedules/{scheduleId}
import { route } from './get.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { scheduleDetail } from '../../../shared/domain/schedules.ts';

export const handler = http(route, async ({ principal, params }) => ok(await scheduleDetail(principal, params.scheduleId)));
