import type { Route } from '../../../shared/http/route.ts';
import { TestRunBody, TestRunResult } from '../../../shared/schemas/workflow-tests.ts';
import { DEFINITION_BYTES, read, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/workflows/test',
  handler: 'http/workflows/test',
  summary:
    'Test a workflow (a definition, or a stored one by id) with its effects mocked: executed on the engine in memory, writing nothing, sending nothing; answers its trace',
  tag: 'Console',
  auth: session,
  // It reads the workflow it names, and nothing else: no write, no queue, no bucket, no secret.
  grants: read,
  body: TestRunBody,
  response: TestRunResult,
  maxBodyBytes: DEFINITION_BYTES,
} as const satisfies Route;
