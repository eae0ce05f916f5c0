// PUT /api/workflow-keys/{key}
import { route } from './put-by-key.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { applyWorkflowFile, viaCli as cli } from '../../../shared/domain/workflow-code.ts';

export const handler = http(route, async ({ principal, params, query, body }) =>
  ok(await applyWorkflowFile(cli(principal), params.key, body, { dryRun: query.dryRun === 'true' })),
);
