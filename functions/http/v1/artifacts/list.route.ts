import type { Route } from '../../../../shared/http/route.ts';
import { ArtifactList, ExecutionParams } from '../../../../shared/schemas/engine.ts';
import { read, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/executions/{executionId}/artifacts',
  handler: 'http/v1/artifacts/list',
  summary: 'List the artifacts of a run',
  tag: 'Artifacts V1',
  auth: wfRead,
  grants: read,
  params: ExecutionParams,
  response: ArtifactList,
} as const satisfies Route;
