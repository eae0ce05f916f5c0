import * as z from 'zod';
import { evaluateTemplate } from '../expressions.ts';
import { base } from './common.ts';
import { asText, type LeafStepModule, stepFault } from './types.ts';

/** `fail`: the run fails with the step's code (default `STEP_FAILED`) and message. */
export const FailStep = z.strictObject({
  ...base,
  type: z.literal('fail'),
  message: z.string().min(1),
  code: z
    .string()
    .max(64)
    .regex(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, 'must be UPPER_SNAKE')
    .optional(),
});
export type FailStep = z.infer<typeof FailStep>;

export const failStep: LeafStepModule<'fail', typeof FailStep> = {
  type: 'fail',
  schema: FailStep,
  externalEffect: false,
  inline: true,
  budgetMs: () => 2_000,
  endsRun: true,
  run: stepFault(async (step, ctx) => ({
    kind: 'fail-run',
    error: { code: step.code ?? 'STEP_FAILED', message: asText(await evaluateTemplate(step.message, ctx.scope)) },
  })),
};
