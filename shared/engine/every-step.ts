import type { NestedStep, Step } from './definition.ts';

/**
 * Every step of a definition, the nested steps of its `for_each` steps included (ids are unique across
 * all of them). Its own module with type-only imports: the notifications path uses it without the
 * definition schema (and jsonata) in its bundle.
 */
export const everyStep = (def: { steps: readonly Step[] }): (Step | NestedStep)[] =>
  def.steps.flatMap((s): (Step | NestedStep)[] => (s.type === 'for_each' ? [s, ...s.steps] : [s]));
