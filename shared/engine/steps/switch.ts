import type { SwitchStep } from '../definition.ts';
import { evaluateTemplate } from '../expressions.ts';
import { StepError } from '../../step-error.ts';
import type { Outcome, Scope } from '../steps.ts';

/**
 * `switch`: the first case whose `when` is true (a boolean, or an expression whose result is truthy)
 * names the next step; else `default`; else `NO_CASE_MATCHED` (the step's `onError` applies). Costs
 * nothing of its own: its choice is data on the run, written with the next checkpoint.
 */
export async function runSwitch(step: SwitchStep, scope: Scope): Promise<Outcome> {
  for (const [i, c] of step.cases.entries()) {
    if (await evaluateTemplate(c.when, scope, { path: ['cases', i, 'when'] })) return chosen(i, c.next);
  }
  if (step.default !== undefined) return chosen('default', step.default);
  throw new StepError('NO_CASE_MATCHED', `No case of step ${step.id} matched, and it has no default.`);
}

const chosen = (c: number | 'default', next: string): Outcome => ({
  kind: 'done',
  output: { case: c, next },
  next,
  branch: { case: c, next },
});
