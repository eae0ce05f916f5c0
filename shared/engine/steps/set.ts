import * as z from 'zod';
import { evaluateTemplate } from '../expressions.ts';
import { base, JsonValue, VarName } from './common.ts';
import { type LeafStepModule, stepFault } from './types.ts';

/** `set`: variables (and its output) from literal JSON and expressions. */
export const SetStep = z.strictObject({ ...base, type: z.literal('set'), values: z.record(VarName, JsonValue) });
export type SetStep = z.infer<typeof SetStep>;

export const setStep: LeafStepModule<'set', typeof SetStep> = {
  type: 'set',
  schema: SetStep,
  externalEffect: false,
  inline: true,
  budgetMs: () => 2_000,
  run: stepFault(async (step, ctx) => {
    const values = (await evaluateTemplate(step.values, ctx.scope)) as Record<string, unknown>;
    return { kind: 'done', output: values, variables: values };
  }),
};
