import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, DEFINITION_BYTES, read } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/workflows/validate',
  handler: CONSOLE_FUNCTIONS.change,
  summary:
    "Check the console editor's draft as a save would, saving nothing: its errors (path and line) and its graph, as an HTML fragment",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  noContent: 'The page already shows a test run of this very text (its `tested` digest): htmx leaves the page as it is',
  maxBodyBytes: 3 * DEFINITION_BYTES + 4096,
} as const satisfies Route;
