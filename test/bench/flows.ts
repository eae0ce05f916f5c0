import { WorkflowDefinition } from '../../shared/engine/definition.ts';

/** An n-step `set` workflow: each step sets one variable from an expression (the bench's runs). */
export const setFlow = (steps: number) =>
  WorkflowDefinition.parse({
    variables: { n: { type: 'number', default: 0 } },
    steps: Array.from({ length: steps }, (_, i) => ({ id: `s${i}`, type: 'set', values: { [`v${i}`]: `{% $vars.n + ${i} %}` } })),
  });

/** One manual approval by an admin: runs wait at it (WAITING_APPROVAL) until decided. */
export const approvalFlow = () =>
  WorkflowDefinition.parse({
    steps: [{ id: 'approve', type: 'manual_approval', title: 'Bench', reviewers: ['role:admin'] }],
  });

/** A 3-case switch on the run's `n` (1 from the bench's triggers), each branch one `set` ending the run. */
export const switchFlow = () =>
  WorkflowDefinition.parse({
    variables: { n: { type: 'number', default: 0 } },
    steps: [
      {
        id: 'route',
        type: 'switch',
        cases: [0, 1, 2].map((n) => ({ when: `{% $vars.n = ${n} %}`, next: `case${n}` })),
      },
      ...[0, 1, 2].map((n) => ({ id: `case${n}`, type: 'set', values: { chose: n }, next: '$end' })),
    ],
  });

/** A `for_each` over `items` numbers whose one nested step is a `set`. */
export const forEachFlow = (items: number) =>
  WorkflowDefinition.parse({
    steps: [
      { id: 'each', type: 'for_each', items: `{% [1..${items}] %}`, steps: [{ id: 'keep', type: 'set', values: { last: '{% $item %}' } }] },
    ],
  });
