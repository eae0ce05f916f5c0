// GET /api/workflows/{id}/versions/{version}
import { route } from './version.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { readWorkflowVersion } from '../../../shared/domain/workflow-versions.ts';
import { versionOfSegment } from '../../../shared/schemas/workflows.ts';

export const handler = http(route, async ({ principal, params }) =>
  ok(await readWorkflowVersion(principal, params.id, versionOfSegment(params.version))),
);
