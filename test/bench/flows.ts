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
