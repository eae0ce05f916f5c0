import type { Route } from '../../../../shared/http/route.ts';
import { ArtifactParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/runs/{executionId}/artifacts/{artifactId}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "Download a run's artifact: a redirect (303) to its 5-minute presigned URL",
  tag: 'Console pages',
  auth: consolePage,
  grants: ['table:read', 'bucket:read'],
  html: true,
  params: ArtifactParams,
  status: 303,
} as const satisfies Route;
