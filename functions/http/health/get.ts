// GET /api/health
import { route } from './get.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';

export const handler = http(route, async () => ok({ status: 'ok', time: Date.now() }));
