import type { Route } from '../shared/http/route.ts';
import { route as v1WorkflowSchema } from './http/v1/schemas/workflow.route.ts';
import { route as workflowKeysPut } from './http/workflows/put-by-key.route.ts';
import { route as workflowKeysDelete } from './http/workflows/delete-by-key.route.ts';
import { route as workflowsTest } from './http/workflows/test.route.ts';

/** Workflows as code (docs/workflows-as-code.md): the workflow file's schema, the by-key routes and test runs; the end of the route table. */
export const codeRoutes = [v1WorkflowSchema, workflowKeysPut, workflowKeysDelete, workflowsTest] as const satisfies readonly Route[];
