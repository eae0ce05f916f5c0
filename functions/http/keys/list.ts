// GET /api/keys
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listKeys } from '../../../shared/domain/keys.ts';

export const handler = http(route, async ({ principal, query }) => ok(await listKeys(principal, query.all ?? false)));
