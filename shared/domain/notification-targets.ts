import { config } from '../config.ts';
import { compileAllowlist, neverReachable } from '../egress/policy.ts';
import type { WorkflowDefinition } from '../engine/definition.ts';
import { validationFailed } from '../errors.ts';

/**
 * A definition's event notification targets, checked when it is saved: one that the egress rules
 * (the `http_request` ones, HTTP_STEP_ALLOWLIST included) can never let through, a loopback or
 * private address, is refused at its path (400), not failed at every delivery. A host name is
 * resolved at each delivery and checked then.
 */
export async function checkNotificationTargets(definition: WorkflowDefinition) {
  const targets = definition.notifications ?? [];
  if (targets.length === 0) return;
  const allow = compileAllowlist(config().HTTP_STEP_ALLOWLIST);
  const reasons = await Promise.all(targets.map((n) => neverReachable(new URL(n.url), allow)));
  const errors = reasons.flatMap((message, i) => (message ? [{ path: `definition.notifications.${i}.url`, message }] : []));
  if (errors.length) throw validationFailed(errors);
}
