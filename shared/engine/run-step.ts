import { evaluateTemplate } from './expressions.ts';
import { type NestedStep, type Step, stepModule } from './steps/index.ts';
import { type Outcome, type StepContext, stepFault } from './steps/types.ts';

/** A step whose `when` is false is skipped; a `when` that fails is the step's failure. */
const skipped = stepFault(async (step: Step | NestedStep, ctx: StepContext): Promise<Outcome> => {
  const go = step.when === undefined || (await evaluateTemplate(step.when, ctx.scope));
  return go ? { kind: 'done' } : { kind: 'skipped' };
});

/** Run one step through its module (the registry). A step fault is a `failed` outcome; anything thrown is a worker fault. */
export async function runStep(step: Step | NestedStep, ctx: StepContext): Promise<Outcome> {
  const gate = await skipped(step, ctx);
  if (gate.kind !== 'done') return gate;
  return stepModule(step).run(step, ctx);
}
