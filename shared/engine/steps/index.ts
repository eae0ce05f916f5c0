import * as z from 'zod';
import { artifactStep } from './artifact.ts';
import { MAX_STEPS } from './common.ts';
import type { StepFacts } from './types.ts';
import { delayStep } from './delay.ts';
import { failStep } from './fail.ts';
import { forEachStep } from './for-each.ts';
import { httpRequestStep } from './http-request.ts';
import { manualApprovalStep } from './manual-approval.ts';
import { setStep } from './set.ts';
import { switchStep } from './switch.ts';
import { waitForCallbackStep } from './wait-for-callback.ts';

/**
 * The step registry: every step type, one module each (docs/architecture.md "Adding a step type").
 * The definition schema, the step loop, the waits and the secret rules read it; nothing else names a
 * step type (test/unit/step-registry.test.ts). A new type is its module and one line here.
 */
export const STEP_MODULES = [
  setStep,
  httpRequestStep,
  manualApprovalStep,
  artifactStep,
  delayStep,
  failStep,
  waitForCallbackStep,
  switchStep,
  forEachStep,
] as const;

type AnyModule = (typeof STEP_MODULES)[number];
type LeafModule = Extract<AnyModule, { schema: unknown }>;
type ContainerModule = Extract<AnyModule, { fields: unknown }>;
const isLeaf = (m: AnyModule): m is LeafModule => 'schema' in m;
const isContainer = (m: AnyModule): m is ContainerModule => 'fields' in m;

/** Steps a container runs once per item: any type but a container. */
export const NestedStep = z.discriminatedUnion(
  'type',
  STEP_MODULES.filter(isLeaf).map((m) => m.schema) as unknown as [LeafModule['schema'], ...LeafModule['schema'][]],
);
export type NestedStep = z.infer<typeof NestedStep>;

/** A container's schema: its own fields and its `steps`. */
const containerSchema = <M extends ContainerModule>(m: M) =>
  z.strictObject({ ...m.fields, steps: z.array(NestedStep).min(1).max(MAX_STEPS) } as M['fields'] & {
    steps: z.ZodArray<typeof NestedStep>;
  });
type ContainerSchema = ReturnType<typeof containerSchema<ContainerModule>>;
export type ContainerStep = z.infer<ContainerSchema>;

export const Step = z.discriminatedUnion('type', [
  ...(STEP_MODULES.filter(isLeaf).map((m) => m.schema) as unknown as LeafModule['schema'][]),
  ...(STEP_MODULES.filter(isContainer).map(containerSchema) as ContainerSchema[]),
] as unknown as [LeafModule['schema'] | ContainerSchema, ...(LeafModule['schema'] | ContainerSchema)[]]);
export type Step = z.infer<typeof Step>;
export type StepType = Step['type'];

/** Any step module, as the loop uses it (the registry guarantees it gets a step of its type). */
export type StepModule = StepFacts<Step | NestedStep> & { type: StepType };

const BY_TYPE = new Map<string, AnyModule>(STEP_MODULES.map((m) => [m.type, m]));

/** The module of a step type (a step's `type`, or a stored step state's); undefined for a name no module has. */
export const moduleOf = (type: unknown): StepModule | undefined => BY_TYPE.get(type as string) as unknown as StepModule | undefined;

/** The module of a parsed step (its type is one of the registry's). */
export const stepModule = (step: Step | NestedStep): StepModule => moduleOf(step.type) as StepModule;

/** Whether a step of this type ends the run when it runs (it has no way on). */
export const endsRunType = (type: unknown) => moduleOf(type)?.endsRun === true;
/** Whether a step of this type jumps to targets it names (a switch's cases). */
export const jumpsType = (type: unknown) => moduleOf(type)?.targets !== undefined;
/** Whether a step of this type sleeps until a time (its wait is the run's, no worker holds it). */
export const sleepsType = (type: unknown) => moduleOf(type)?.sleeps === true;

/** Whether a step type holds steps (a container: `steps`, run once per item). */
export const isContainerType = (type: unknown) => {
  const m = BY_TYPE.get(type as string);
  return m !== undefined && isContainer(m);
};
