// POST /api/v1/executions/{executionId}/resume
import { route } from './resume.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { executionView } from '../../../../shared/domain/executions.ts';
import { resumeRun } from '../../../../shared/engine/resume.ts';

export const handler = http(route, async ({ principal, params }) =>
  ok(executionView(await resumeRun(principal.accountId, params.executionId, principal.userId, Date.now(), principal))),
);
