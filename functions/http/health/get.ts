// GET /api/health
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';

export const handler = http(route('GET /api/health'), async () => ok({ status: 'ok', time: Date.now() }));
