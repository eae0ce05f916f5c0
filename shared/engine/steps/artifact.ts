import * as z from 'zod';
import { type Artifact, artifactObjectKey, artifactPut } from '../../db/entities/artifact.ts';
import { newId } from '../../ids.ts';
import { StepError } from '../../step-error.ts';
import { evaluateTemplate } from '../expressions.ts';
import { base, JsonValue } from './common.ts';
import { RetryPolicy } from './retry-policy.ts';
import { type LeafStepModule, type Outcome, type StepContext, stepFault } from './types.ts';

export const MAX_ARTIFACT_BYTES = 5 * 1024 * 1024;

export const ArtifactStep = z.strictObject({
  ...base,
  type: z.literal('artifact'),
  name: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^/\\]*$/, 'must not contain / or \\'),
  /** Absent: decided at run time from the content. */
  contentType: z.string().min(1).max(255).optional(),
  content: JsonValue,
  retry: RetryPolicy.optional(),
});
export type ArtifactStep = z.infer<typeof ArtifactStep>;

/** `artifact`: its content stored in the artifacts bucket (an effect outside the run: checkpointed before it). */
export const artifactStep: LeafStepModule<'artifact', typeof ArtifactStep> = {
  type: 'artifact',
  schema: ArtifactStep,
  externalEffect: true,
  budgetMs: () => 10_000,
  run: stepFault((step, ctx) => artifact(step, ctx)),
};

async function artifact(step: ArtifactStep, ctx: StepContext): Promise<Outcome> {
  const content = await evaluateTemplate(step.content, ctx.scope);
  const isText = typeof content === 'string';
  const bytes = Buffer.from(isText ? content : JSON.stringify(content ?? null), 'utf8');
  if (bytes.length > MAX_ARTIFACT_BYTES)
    throw new StepError('ARTIFACT_TOO_LARGE', `Artifact ${step.name} is ${bytes.length} bytes; the limit is ${MAX_ARTIFACT_BYTES}.`);
  const { accountId, executionId } = ctx.execution;
  const artifactId = newId('ar');
  const a: Artifact = {
    artifactId,
    accountId,
    executionId,
    stepId: step.id,
    name: step.name,
    contentType: step.contentType ?? (isText ? 'text/plain; charset=utf-8' : 'application/json'),
    size: bytes.length,
    createdAt: ctx.now,
    objectKey: artifactObjectKey(accountId, executionId, artifactId),
  };
  await ctx.io.putObject(a.objectKey, bytes, a.contentType, ctx.signal);
  return { kind: 'done', output: { artifactId, name: a.name, size: a.size }, items: [artifactPut(a)] };
}
