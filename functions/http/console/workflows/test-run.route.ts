import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, DEFINITION_BYTES, read } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/workflows/test',
  handler: CONSOLE_FUNCTIONS.change,
  summary:
    'The editor\'s "Test run": the draft run on the test-run engine in memory with a sample input (nothing written or sent); the editor again with the result (htmx: the check and the result alone)',
  tag: 'Console pages',
  auth: consolePage,
  // As POST /api/workflows/test: it reads the workflow edited, and nothing else.
  grants: read,
  html: true,
  maxBodyBytes: 4 * DEFINITION_BYTES + 4096,
} as const satisfies Route;
