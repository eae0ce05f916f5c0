// GET /api/v1/schemas/workflow.json
import { route } from './workflow.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { workflowJsonSchemaText } from '../../../../shared/schemas/workflow-file.ts';

let doc: string | undefined;

export const handler = http(route, async () => {
  doc ??= workflowJsonSchemaText();
  return { statusCode: 200, headers: { 'content-type': 'application/schema+json', 'cache-control': 'public, max-age=300' }, body: doc };
});
