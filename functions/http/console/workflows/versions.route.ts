import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { VersionNumber } from '../../../../shared/schemas/workflows.ts';
import { CONSOLE_FUNCTIONS, consolePage, cursorErrors, read, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows/{workflowId}/versions',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's versions of a workflow: each one's number, author and time, a diff between any two, Restore this version",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: V1WorkflowParams,
  query: z.object({
    cursor: z.string().max(4096).optional(),
    /** The diff: from one version to another. */
    from: VersionNumber.optional(),
    to: VersionNumber.optional(),
  }),
  errors: [...cursorErrors, ...refuses(404, 'WORKFLOW_VERSION_NOT_FOUND')],
} as const satisfies Route;
