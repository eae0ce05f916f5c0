import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, refuses, startsRuns } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/workflows/{workflowId}/run',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'The "Run workflow" form: start a run as the signed-in user (303 to its page); refused values are the form again',
  tag: 'Console pages',
  auth: consolePage,
  // As the v1 start: the run, its first event and its audit entry are written, its message sent.
  grants: startsRuns,
  html: true,
  status: 303,
  params: V1WorkflowParams,
  // Variables take up to 256 KiB as JSON; a form encodes them at up to three bytes a byte.
  maxBodyBytes: 3 * 256 * 1024 + 4096,
  errors: [...refuses(400, 'VALIDATION_FAILED'), ...refuses(409, 'IDEMPOTENCY_KEY_REUSED')],
} as const satisfies Route;
