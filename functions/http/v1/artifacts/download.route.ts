import type { Route } from '../../../../shared/http/route.ts';
import { ArtifactParams, DownloadLink, DownloadQuery } from '../../../../shared/schemas/engine.ts';
import { wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/executions/{executionId}/artifacts/{artifactId}/download',
  handler: 'http/v1/artifacts/download',
  summary: 'A 5-minute download link (`?redirect=1`: 302)',
  tag: 'Artifacts V1',
  auth: wfRead,
  grants: ['table:read', 'bucket:read'],
  params: ArtifactParams,
  query: DownloadQuery,
  response: DownloadLink,
  redirect: 'With `?redirect=1`: to the 5-minute presigned URL (`Location`)',
} as const satisfies Route;
