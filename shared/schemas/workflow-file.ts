import * as z from 'zod';
import { WorkflowDefinition } from '../engine/definition.ts';
import { JsonValue, When } from '../engine/steps/common.ts';
import { NestedStep, Step } from '../engine/steps/index.ts';
import { idOf } from './common.ts';
import { WorkflowBody } from './workflows.ts';

/**
 * Workflows as code (docs/workflows-as-code.md): one JSON file per workflow, `<key>.json`, matched to
 * the account's workflow by its `key`, never by its display name. The file is the console's create body
 * (`WorkflowBody`: the same schemas the server validates with) plus its key and an optional `$schema`.
 */

/** A workflow's key: stable, chosen by its author, the file's name without `.json`. */
export const WorkflowKey = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 lowercase letters, digits, _ or -, starting with a letter or digit');
export type WorkflowKey = z.infer<typeof WorkflowKey>;

/** One workflow file. Closed, so a misspelt setting is an error rather than silently ignored. */
export const WorkflowFile = z.strictObject({
  $schema: z.string().max(2048).optional(),
  key: WorkflowKey,
  ...WorkflowBody.shape,
});
export type WorkflowFile = z.infer<typeof WorkflowFile>;

/** What the server's JSON Schema is served as, and kept in the repository as (`schemas/workflow.schema.json`). */
export const WORKFLOW_SCHEMA_PATH = '/api/v1/schemas/workflow.json';

const EXPRESSION = { type: 'string', pattern: '^\\{%[\\s\\S]*%\\}$', description: 'A JSONata expression: "{% ... %}"' };

/** Names for the parts editors show: each step type, the definition. */
function registry() {
  const ids = z.registry<{ id: string; title?: string; description?: string }>();
  ids.add(WorkflowDefinition, { id: 'WorkflowDefinition', description: 'A workflow definition (docs/workflows.md).' });
  for (const option of Step.options) {
    const type = (option.shape.type as z.ZodLiteral<string>).value;
    ids.add(option, { id: `step.${type}`, title: `A ${type} step` });
  }
  ids.add(NestedStep, { id: 'NestedStep', description: "A step inside a container's `steps`: any type but a container." });
  return ids;
}

/**
 * The JSON Schema (draft 2020-12) of a workflow file, generated from the zod schemas the server parses
 * with. What no JSON Schema can say (targets that name a missing step, expressions that do not parse,
 * where `$secrets` may go, …) the server checks and `flowgate validate` checks offline; both are listed
 * in docs/workflows-as-code.md.
 */
export function workflowJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(WorkflowFile, {
    target: 'draft-2020-12',
    io: 'input',
    metadata: registry(),
    // z.custom schemas: a guard no JSON Schema can read; said here as what they accept.
    unrepresentable: 'any',
    override: (ctx) => {
      const json = ctx.jsonSchema as Record<string, unknown>;
      if (ctx.zodSchema === When) Object.assign(json, { anyOf: [{ type: 'boolean' }, EXPRESSION] });
      if (ctx.zodSchema === JsonValue) Object.assign(json, { description: 'Any JSON value; a string "{% ... %}" is an expression' });
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = schema;
  return {
    $schema,
    title: 'Flowgate workflow',
    description:
      'One workflow as code: `<key>.json` with its key, name and definition (docs/workflows-as-code.md). Served at GET /api/v1/schemas/workflow.json.',
    ...rest,
  };
}

/** The schema as the repository keeps it and the route serves it: two-space JSON and a final newline. */
export const workflowJsonSchemaText = () => `${JSON.stringify(workflowJsonSchema(), null, 2)}\n`;

/** `PUT /api/workflow-keys/{key}`: a workflow file's settings (its key in the path), where it lives, and what export adopts. */
export const WorkflowCodeBody = WorkflowBody.extend({
  origin: z.string().max(500).optional().describe('Where the file lives (a repository and a path): the console shows it.'),
  adopt: idOf('WORKFLOW_NOT_FOUND', 'Workflow')
    .optional()
    .describe('Take this workflow, made in the console or the API, under code with this key (`flowgate export`).'),
});
/** Any text: a key that is not one is refused by the domain (400 on a put; a delete finds no workflow with it). */
export const WorkflowKeyParams = z.object({ key: z.string().max(200) });
export const WorkflowCodeQuery = z.object({
  dryRun: z.enum(['true', 'false']).optional().describe('`true`: check everything and answer what would change, changing nothing.'),
});
const CodeContent = z.object({
  name: z.string(),
  description: z.string().nullable(),
  recovery: z.boolean(),
  editors: z.array(z.string()),
  definition: z.unknown().describe('Secrets masked, as every view shows them.'),
});
export const WorkflowCodeChange = z.object({
  key: z.string(),
  action: z.enum(['create', 'update', 'unchanged']),
  workflowId: z.string().nullable().describe('Null on a dry run that would create it.'),
  changed: z.array(z.string()).describe('The settings that differ; `key` alone: the workflow is taken under code.'),
  before: CodeContent.nullable(),
  after: CodeContent,
  version: z.number().nullable().describe('Its version after the call; a call that changes nothing makes none.'),
});
