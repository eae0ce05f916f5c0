import type { NestedStep, Step } from './steps/index.ts';
import type { ManualApprovalStep } from './steps/manual-approval.ts';

/**
 * Walks over a definition's steps by their shape, with type-only imports: the notifications path uses
 * it without the step modules (their schemas, their code, jsonata) in its bundle. The shapes are the
 * registry's facts (test/unit/step-registry.test.ts holds them together): a container step (one whose
 * module has `fields`) holds its steps in `steps`; a step whose module `asksPeople` has `reviewers`.
 */

type AnyStep = Step | NestedStep;

/** The steps a step holds (a container's), or none. */
export const nestedOf = (s: AnyStep): readonly NestedStep[] => ('steps' in s ? s.steps : []);

/** Every step of a definition, the nested steps of its containers included (ids are unique across all of them). */
export const everyStep = (def: { steps: readonly Step[] }): AnyStep[] => def.steps.flatMap((s): AnyStep[] => [s, ...nestedOf(s)]);

/** Every step with its path (`steps.<i>`, or `steps.<i>.steps.<j>` inside a container). */
export const stepsWithPaths = (def: { steps: readonly Step[] }): { step: AnyStep; path: string }[] =>
  def.steps.flatMap((s, i) => [
    { step: s as AnyStep, path: `steps.${i}` },
    ...nestedOf(s).map((n, j) => ({ step: n as AnyStep, path: `steps.${i}.steps.${j}` })),
  ]);

/** A step that asks people: its reviewers decide, told on the account's channels (`notify`, `escalate`). */
export const asksPeople = (s: AnyStep | undefined): s is ManualApprovalStep => s !== undefined && 'reviewers' in s;
