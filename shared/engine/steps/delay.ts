import * as z from 'zod';
import { base } from './common.ts';
import { type LeafStepModule, stepFault } from './types.ts';

/** `delay`: the run sleeps `seconds` holding no worker (an SQS delay); the run's wake ends the step (`../waits.ts`). */
export const DelayStep = z.strictObject({ ...base, type: z.literal('delay'), seconds: z.number().int().min(1).max(86_400) });
export type DelayStep = z.infer<typeof DelayStep>;

export const delayStep: LeafStepModule<'delay', typeof DelayStep> = {
  type: 'delay',
  schema: DelayStep,
  externalEffect: false,
  budgetMs: () => 2_000,
  sleeps: true,
  run: stepFault((step, ctx) => ({ kind: 'sleep', until: ctx.now + step.seconds * 1000 })),
};
