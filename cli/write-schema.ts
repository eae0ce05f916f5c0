// npm run schema: writes schemas/workflow.schema.json from the server's own schemas (a test fails when it is stale).
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { workflowJsonSchemaText } from '../shared/schemas/workflow-file.ts';

const path = resolve(import.meta.dirname, '../schemas/workflow.schema.json');
writeFileSync(path, workflowJsonSchemaText());
console.log(`wrote ${path}`);
