import type { Execution } from '../db/entities/execution.ts';
import type { Scope } from './expressions.ts';

/** What a run's expressions see: `$vars`, `$steps`, `$execution`, inside a loop `$item` and `$index`, and `$trigger`. */
export function scopeOf(e: Execution): Scope {
  const loop = e.loop;
  return {
    vars: e.variables,
    steps: e.outputs,
    execution: { id: e.executionId, workflowId: e.workflowId, trigger: e.trigger, startedAt: e.startedAt },
    ...(loop && loop.iteration < loop.items.length ? { item: loop.items[loop.iteration], index: loop.iteration } : {}),
    ...(e.triggerContext ? { trigger: e.triggerContext } : {}),
  };
}
