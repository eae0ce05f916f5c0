// POST /api/auth/logout-everywhere
import { route } from './logout-everywhere.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { signOutEverywhere } from '../../../shared/domain/session-ends.ts';

export const handler = http(route, async ({ principal }) => {
  await signOutEverywhere(principal);
  return noContent();
});
