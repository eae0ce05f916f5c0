import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, DEFINITION_BYTES, readWrite, refuses, secretUseErrors } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/workflows/new',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Save a new workflow from the console's editor, then its page (303); a refused draft is the editor again with its errors",
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
  // A form-encoded definition: up to three bytes sent per byte of JSON.
  maxBodyBytes: 3 * DEFINITION_BYTES + 4096,
  errors: [...refuses(400, 'VALIDATION_FAILED'), ...secretUseErrors],
} as const satisfies Route;
