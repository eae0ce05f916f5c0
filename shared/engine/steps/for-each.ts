import type { ForEachStep } from '../definition.ts';
import { evaluateTemplate } from '../expressions.ts';
import { StepError } from '../../step-error.ts';
import type { Outcome, Scope } from '../steps.ts';

/**
 * `for_each` entered: its items, evaluated once (an array of at most `maxItems`, else `INVALID_ITEMS`).
 * The iterations are run by the step loop (`../flow.ts`), with the position kept on the run.
 */
export async function startForEach(step: ForEachStep, scope: Scope): Promise<Outcome> {
  const items = await evaluateTemplate(step.items, scope, { path: ['items'] });
  if (!Array.isArray(items)) {
    const got = items === undefined ? 'nothing' : items === null ? 'null' : `a ${typeof items}`;
    throw new StepError('INVALID_ITEMS', `The items of step ${step.id} must be an array; the expression gave ${got}.`);
  }
  if (items.length > step.maxItems)
    throw new StepError('INVALID_ITEMS', `Step ${step.id} got ${items.length} items; its maxItems is ${step.maxItems}.`);
  return { kind: 'loop', items };
}
