import * as z from 'zod';
import { RunError } from '../db/entities/execution-state.ts';
import { WorkflowDefinition } from '../engine/definition.ts';
import { StepId } from '../engine/steps/common.ts';
import { idOf } from './common.ts';

/**
 * Test runs (`POST /api/workflows/test`, `flowgate test`; docs/workflows-as-code.md "Test runs"): a
 * workflow (a definition, or a stored workflow by id) executed on the engine with its effects mocked.
 */

/** Mocks answered in turn (an attempt of a retried request, an iteration of a loop each): at most this many per step. */
export const MAX_MOCK_ANSWERS = 100;

/** A step's mock: its one answer, or a list of them taken in order (each checked at its own path). */
export const mockOf = (one: z.ZodType, mock: unknown) =>
  Array.isArray(mock) ? z.array(one).min(1).max(MAX_MOCK_ANSWERS).safeParse(mock) : one.safeParse(mock);

export const TestRunBody = z
  .strictObject({
    definition: WorkflowDefinition.optional().describe('The definition to test (a draft, a file); or `workflowId`.'),
    workflowId: idOf('WORKFLOW_NOT_FOUND', 'Workflow')
      .optional()
      .describe('A workflow of the account, tested as it is now; or `definition`.'),
    input: z.record(z.string(), z.unknown()).default({}).describe("The run's input variables, as a start takes them."),
    mocks: z
      .record(StepId, z.unknown())
      .default({})
      .refine((m) => Object.keys(m).length <= 200, 'at most 200 mocks')
      .describe(
        'Per step id: an `http_request` takes `{ status, headers, body }`, a `manual_approval` `{ decision, form, comment }`, a ' +
          '`wait_for_callback` `{ status: "success", output }`, `{ status: "failure", error }` or `{ status: "timeout" }`; or a list ' +
          'of them, one per time the step runs (retries, loop iterations).',
      ),
  })
  .superRefine((b, ctx) => {
    if ((b.definition === undefined) === (b.workflowId === undefined))
      ctx.addIssue({ code: 'custom', path: ['definition'], message: 'give exactly one of definition and workflowId' });
  });
export type TestRunBody = z.infer<typeof TestRunBody>;

const TestStep = z.object({
  id: z.string(),
  iteration: z.number().optional(),
  status: z.enum(['RUNNING', 'RETRYING', 'WAITING', 'SUCCEEDED', 'FAILED']),
  input: z
    .unknown()
    .describe("What it would have sent or asked: an http_request's request, an approval's title, reviewers and form; else null."),
  output: z.unknown().describe('`$steps.<id>.output`'),
  error: RunError.nullable(),
  attempts: z.number().optional(),
});

export const TestRunResult = z.object({
  status: z.enum(['SUCCEEDED', 'FAILED']),
  output: z.unknown(),
  error: RunError.nullable(),
  path: z.array(z.string()).describe('The step ids in the order executed (a loop step once, its steps once per iteration).'),
  steps: z.array(TestStep),
  waitedSeconds: z.number().describe('Delays and retry backoffs the run would have waited: planned, none slept.'),
});

/**
 * A test file of a workflows folder (`<name>.test.json`, `flowgate test`): the workflow's key, the run's
 * input and mocks as the endpoint takes them, and what to expect (each field optional; `output` is
 * matched as a subset: the keys given, recursively, arrays element by element).
 */
export const WorkflowTestFile = z.strictObject({
  $schema: z.string().max(2048).optional(),
  description: z.string().max(2000).optional(),
  workflow: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be the key of a workflow file of the folder'),
  input: z.record(z.string(), z.unknown()).default({}),
  mocks: z.record(z.string(), z.unknown()).default({}),
  expect: z
    .strictObject({
      status: z.enum(['SUCCEEDED', 'FAILED']).optional(),
      output: z.unknown().optional(),
      path: z.array(z.string()).optional(),
      error: z.strictObject({ code: z.string().optional(), message: z.string().optional() }).optional(),
    })
    .default({}),
});
export type WorkflowTestFile = z.infer<typeof WorkflowTestFile>;
