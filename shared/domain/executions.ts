import { storage } from '../clients.ts';
import { config } from '../config.ts';
import { attachment } from '../content-disposition.ts';
import { getArtifact, listArtifacts } from '../db/entities/artifact.ts';
import { TERMINAL } from '../db/entities/execution-state.ts';
import { listEvents } from '../db/entities/run-events.ts';
import { currentStepId, type Execution, type ExecutionFilters, getExecution, listExecutions } from '../db/entities/execution.ts';
import { conflict, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';

export const DOWNLOAD_URL_SECONDS = 300;

/** The v1 execution record (docs/api.md): no definition, lease or dispatch internals. */
export const executionView = (e: Execution) => ({
  executionId: e.executionId,
  workflowId: e.workflowId,
  ...(e.webhookId ? { webhookId: e.webhookId } : {}),
  trigger: e.trigger,
  ...(e.scheduleId
    ? { scheduleId: e.scheduleId, scheduledAt: e.scheduledAt ?? e.startedAt, ...(e.manualFire ? { manualFire: true } : {}) }
    : {}),
  status: e.status,
  variables: e.variables,
  startedAt: e.startedAt,
  updatedAt: e.updatedAt,
  ...(e.finishedAt !== undefined ? { finishedAt: e.finishedAt } : {}),
  // Where the run is, or where it stopped (INTERRUPTED: the step a resume re-enters).
  ...(e.status === 'RUNNING' || e.status === 'WAITING_APPROVAL' || e.status === 'WAITING_CALLBACK' || e.status === 'INTERRUPTED'
    ? { currentStepId: currentStepId(e) }
    : {}),
  // Inside a for_each: the loop, the iteration (0-based) and how many items (its step state has the nested steps').
  ...(e.loop ? { loop: { stepId: e.loop.stepId, iteration: e.loop.iteration, items: e.loop.items.length } } : {}),
  steps: e.steps,
  ...(e.error ? { error: e.error } : {}),
  ...(e.approvalId ? { approvalId: e.approvalId } : {}),
  ...(e.callbackId ? { callbackId: e.callbackId } : {}),
  ...(e.cancelRequested ? { cancelRequested: true } : {}),
  ...(e.interruptedAt !== undefined ? { interruptedAt: e.interruptedAt, interruptReason: e.interruptReason } : {}),
  ...(e.rerunOf ? { rerunOf: e.rerunOf } : {}),
  ...(e.replayOf ? { replayOf: e.replayOf } : {}),
  ...(e.retries ? { retries: e.retries } : {}),
});

export async function requireExecution(accountId: string, executionId: string): Promise<Execution> {
  const e = await getExecution(accountId, executionId);
  if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
  return e;
}

export async function pageExecutions(accountId: string, filters: ExecutionFilters, limit: number, cursor: string | undefined) {
  const binding = `executions:${JSON.stringify([accountId, filters.workflowId ?? '', filters.status ?? '', filters.trigger ?? ''])}`;
  const page = await listExecutions(accountId, filters, limit, decodeCursor(cursor, binding));
  return { items: page.items.map(executionView), nextCursor: encodeCursor(page.lastKey, binding) };
}

export async function executionResult(accountId: string, executionId: string) {
  const e = await requireExecution(accountId, executionId);
  if (!TERMINAL.includes(e.status))
    throw conflict('EXECUTION_NOT_FINISHED', `Execution ${executionId} is ${e.status}; the result exists once it has finished.`);
  return { executionId, status: e.status, output: e.output ?? null, variables: e.variables, error: e.error ?? null };
}

export async function pageEvents(accountId: string, executionId: string, limit: number, cursor: string | undefined) {
  await requireExecution(accountId, executionId);
  const binding = `events:${accountId}:${executionId}`;
  const page = await listEvents(accountId, executionId, limit, decodeCursor(cursor, binding));
  return { items: page.items, nextCursor: encodeCursor(page.lastKey, binding) };
}

export async function artifactsOf(accountId: string, executionId: string) {
  await requireExecution(accountId, executionId);
  const items = await listArtifacts(accountId, executionId);
  return {
    items: items.map((a) => ({
      artifactId: a.artifactId,
      name: a.name,
      contentType: a.contentType,
      size: a.size,
      createdAt: a.createdAt,
      stepId: a.stepId,
    })),
    nextCursor: null,
  };
}

/** A presigned GET (5 minutes) that downloads the artifact as an attachment under its name. */
export async function artifactDownload(accountId: string, executionId: string, artifactId: string, now = Date.now()) {
  const a = await getArtifact(accountId, executionId, artifactId);
  if (!a) throw notFound('ARTIFACT_NOT_FOUND', `Artifact ${artifactId} does not exist.`);
  const bucket = config().ARTIFACTS_BUCKET;
  const [{ GetObjectCommand }, { getSignedUrl }] = await Promise.all([import('../s3.ts'), import('@aws-sdk/s3-request-presigner')]);
  const url = await getSignedUrl(
    await storage(),
    new GetObjectCommand({
      Bucket: bucket,
      Key: a.objectKey,
      ResponseContentDisposition: attachment(a.name, a.artifactId),
      ResponseContentType: a.contentType,
    }),
    { expiresIn: DOWNLOAD_URL_SECONDS },
  );
  return { url, expiresAt: now + DOWNLOAD_URL_SECONDS * 1000 };
}
