import { workflowJsonSchemaText } from '../shared/schemas/workflow-file.ts';
const t = workflowJsonSchemaText();
console.log(t.length, t.split('\n').length);
(await import('node:fs')).writeFileSync('.scratch/out.json', t);
