import * as z from 'zod';
import { isExpression } from '../expression-syntax.ts';
import { evaluateTemplate } from '../expressions.ts';
import { StepError } from '../../step-error.ts';
import { base, MAX_ITEMS } from './common.ts';
import { type ContainerStepModule, stepFault } from './types.ts';

/** `for_each`'s own fields; its `steps` (any type but a container) are added by the registry (`./index.ts`). */
const fields = {
  ...base,
  type: z.literal('for_each'),
  items: z.string().refine(isExpression, 'must be an expression "{% ... %}"'),
  maxItems: z.number().int().min(1).max(MAX_ITEMS).default(MAX_ITEMS),
};

/**
 * `for_each` entered: its items, evaluated once (an array of at most `maxItems`, else `INVALID_ITEMS`).
 * The iterations are run by the step loop (`../flow.ts`), with the position kept on the run.
 */
export const forEachStep: ContainerStepModule<'for_each', typeof fields, { id: string; items: string; maxItems: number }> = {
  type: 'for_each',
  fields,
  externalEffect: false,
  inline: true,
  budgetMs: () => 2_000,
  movesRun: true,
  run: stepFault(async (step, ctx) => {
    const items = await evaluateTemplate(step.items, ctx.scope, { path: ['items'] });
    if (!Array.isArray(items)) {
      const got = items === undefined ? 'nothing' : items === null ? 'null' : `a ${typeof items}`;
      throw new StepError('INVALID_ITEMS', `The items of step ${step.id} must be an array; the expression gave ${got}.`);
    }
    if (items.length > step.maxItems)
      throw new StepError('INVALID_ITEMS', `Step ${step.id} got ${items.length} items; its maxItems is ${step.maxItems}.`);
    return { kind: 'loop', items };
  }),
};
