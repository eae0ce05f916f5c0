import * as z from 'zod';
import { USER_ID } from '../ids.ts';
import { crossCheck } from './definition-checks.ts';
import { EventType } from '../db/event-types.ts';
import { SECRET_REFERENCE } from './secret-reference.ts';
import { isHttpUrl, JsonValue, MAX_ITEMS, MAX_STEPS } from './steps/common.ts';
import { Step } from './steps/index.ts';
import { hasType, VariableType, VarName } from './variable-types.ts';

/**
 * Workflow definitions (docs/workflows.md): one schema; faults are reported at their exact path. The
 * steps' schemas are their modules' (the registry: ./steps/index.ts).
 */

export const UserId = z.string().regex(USER_ID, 'must be a user id');

export const VariableDecl = z
  .strictObject({ type: VariableType, default: JsonValue.optional(), description: z.string().optional() })
  .superRefine((d, ctx) => {
    if (d.default !== undefined && !hasType(d.default, d.type))
      ctx.addIssue({ code: 'custom', path: ['default'], message: `must be a ${d.type}` });
  });

export const Notification = z.strictObject({
  // https only; plain http is accepted for localhost and 127.0.0.1 (local mode and tests).
  url: z
    .string()
    .max(2048)
    .refine((s) => isHttpUrl(s, true), 'must be an https URL (http only for localhost or 127.0.0.1)'),
  events: z.array(EventType).min(1).max(EventType.options.length),
  // On update, the mask a view showed (or no secret) keeps the stored one (shared/domain/definition-secrets.ts).
  secret: z
    .string()
    .max(512)
    .refine(
      (s) => /^whsec_[A-Za-z0-9+/=]{24,}$/.test(s) || /^••••[A-Za-z0-9+/=]{0,4}$/.test(s) || SECRET_REFERENCE.test(s),
      'must be a whsec_ secret or {% $secrets.NAME %}',
    )
    .optional(),
});

/**
 * The default `maxStepExecutions`: a loop over the most items (the default `maxItems`) with one nested
 * step runs to its end, beside the most top-level steps: 100 top-level (the loop one of them) + 1,000
 * nested (docs/workflows.md "Control flow").
 */
export const DEFAULT_MAX_STEP_EXECUTIONS = MAX_STEPS + MAX_ITEMS;
export const MAX_STEP_EXECUTIONS = 10_000;

export const WorkflowDefinition = z
  .strictObject({
    variables: z.record(VarName, VariableDecl).optional(),
    steps: z.array(Step).min(1).max(MAX_STEPS),
    /** Steps a run may execute in all, nested ones and repeats included (absent: `DEFAULT_MAX_STEP_EXECUTIONS`). */
    maxStepExecutions: z.number().int().min(1).max(MAX_STEP_EXECUTIONS).optional(),
    output: JsonValue.optional(),
    notifications: z.array(Notification).max(10).optional(),
  })
  .superRefine(crossCheck, { when: () => true });

export type WorkflowDefinition = z.infer<typeof WorkflowDefinition>;
export type Notification = z.infer<typeof Notification>;
