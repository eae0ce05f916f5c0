import * as z from 'zod';
import { evaluateTemplate } from '../expressions.ts';
import { StepError } from '../../step-error.ts';
import { base, Target, When } from './common.ts';
import { type LeafStepModule, type Outcome, stepFault } from './types.ts';

/** `switch`: the first case whose `when` is true names the next step; else `default`; else the step fails `NO_CASE_MATCHED`. */
export const SwitchStep = z.strictObject({
  ...base,
  type: z.literal('switch'),
  cases: z
    .array(z.strictObject({ when: When, next: Target }))
    .min(1)
    .max(50),
  default: Target.optional(),
});
export type SwitchStep = z.infer<typeof SwitchStep>;

const chosen = (c: number | 'default', next: string): Outcome => ({
  kind: 'done',
  output: { case: c, next },
  next,
  branch: { case: c, next },
});

/**
 * The first case whose `when` is true (a boolean, or an expression whose result is truthy) names the
 * next step; else `default`; else `NO_CASE_MATCHED` (the step's `onError` applies). Costs nothing of
 * its own: its choice is data on the run, written with the next checkpoint.
 */
export const switchStep: LeafStepModule<'switch', typeof SwitchStep> = {
  type: 'switch',
  schema: SwitchStep,
  externalEffect: false,
  inline: true,
  budgetMs: () => 2_000,
  movesRun: true,
  targets: (step) => [
    ...(Array.isArray(step.cases) ? step.cases : []).map((c, j) => ({
      target: (c as { next?: unknown } | null)?.next,
      path: ['cases', j, 'next'],
    })),
    { target: step.default, path: ['default'] },
  ],
  run: stepFault(async (step, ctx) => {
    for (const [i, c] of step.cases.entries()) {
      if (await evaluateTemplate(c.when, ctx.scope, { path: ['cases', i, 'when'] })) return chosen(i, c.next);
    }
    if (step.default !== undefined) return chosen('default', step.default);
    throw new StepError('NO_CASE_MATCHED', `No case of step ${step.id} matched, and it has no default.`);
  }),
};
