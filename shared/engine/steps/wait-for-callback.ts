import * as z from 'zod';
import { type Callback, CallbackError, callbackPut } from '../../db/entities/callback.ts';
import { CALLBACK_PATH, link } from '../../links.ts';
import type { Execution } from '../../db/entities/execution.ts';
import type { RunError } from '../../db/entities/execution-state.ts';
import { newId } from '../../ids.ts';
import { logger } from '../../logger.ts';
import { StepError } from '../../step-error.ts';
import { hashToken, mintToken } from '../../tokens.ts';
import { scopeOf } from '../scope.ts';
import { base } from './common.ts';
import { HttpRequestStep, httpRequest } from './http-request.ts';
import { type LeafStepModule, type StepIO, stepFault, type Wait } from './types.ts';

/** The callback's address (the token is the credential, sent as `Authorization: Bearer`). */
export const callbackUrl = (callbackId: string) => link(CALLBACK_PATH, { callbackId });

/** The request a wait_for_callback sends once its callback exists: an http_request's fields, with `$callback.url` and `$callback.token`. */
const { method, url, headers, secretHeaders, body, timeoutMs } = HttpRequestStep.shape;
export const CallbackRequest = z.strictObject({ method, url, headers, secretHeaders, body, timeoutMs }).superRefine((s, ctx) => {
  if (s.body !== undefined && (s.method === 'GET' || s.method === 'HEAD'))
    ctx.addIssue({ code: 'custom', path: ['body'], message: `a ${s.method} request has no body` });
});
export const WaitForCallbackStep = z
  .strictObject({
    ...base,
    type: z.literal('wait_for_callback'),
    timeoutSeconds: z.number().int().min(1).max(31_536_000),
    heartbeatSeconds: z.number().int().min(1).max(31_536_000).optional(),
    onTimeout: z.enum(['fail', 'continue']).default('fail'),
    request: CallbackRequest.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.heartbeatSeconds !== undefined && s.heartbeatSeconds > s.timeoutSeconds)
      ctx.addIssue({ code: 'custom', path: ['heartbeatSeconds'], message: 'must be at most timeoutSeconds' });
  });
export type WaitForCallbackStep = z.infer<typeof WaitForCallbackStep>;

/** A test run's report in place of the external system's (`POST /api/v1/callbacks/{id}`'s body), or `timeout`: its deadline passed. */
export const CallbackMock = z.discriminatedUnion('status', [
  z.strictObject({ status: z.literal('success'), output: z.record(z.string(), z.unknown()).optional() }),
  z.strictObject({ status: z.literal('failure'), error: CallbackError }),
  z.strictObject({ status: z.literal('timeout') }),
]);
export type CallbackMock = z.infer<typeof CallbackMock>;

/**
 * `wait_for_callback`: the run waits (WAITING_CALLBACK, no worker) until an external system reports
 * on the callback with its one token, its deadline passes (the scheduled sweep) or it is cancelled
 * (the callback itself: ../callbacks.ts). Its `request`, if any, is sent once the wait is written.
 */
export const waitForCallbackStep: LeafStepModule<'wait_for_callback', typeof WaitForCallbackStep> = {
  type: 'wait_for_callback',
  schema: WaitForCallbackStep,
  externalEffect: false,
  budgetMs: (step) => (step.request ? step.request.timeoutMs + 2_000 : 2_000),
  request: ['request'],
  mock: CallbackMock,
  run: stepFault((step, ctx) => {
    const { execution: e, now } = ctx;
    const callbackId = newId('cb');
    // The token names its account (`acc_<id>`: `callback-auth` looks the callback up there).
    const token = mintToken('dyc', e.accountId.slice(e.accountId.indexOf('_') + 1));
    const timeoutAt = now + step.timeoutSeconds * 1000;
    const c: Callback = {
      callbackId,
      accountId: e.accountId,
      executionId: e.executionId,
      workflowId: e.workflowId,
      stepId: step.id,
      status: 'PENDING',
      tokenHash: hashToken(token),
      onTimeout: step.onTimeout,
      timeoutAt,
      ...(step.heartbeatSeconds ? { heartbeatSeconds: step.heartbeatSeconds } : {}),
      deadline: step.heartbeatSeconds ? Math.min(timeoutAt, now + step.heartbeatSeconds * 1000) : timeoutAt,
      createdAt: now,
    };
    const link = { url: callbackUrl(callbackId), token };
    const data = {
      callbackId,
      stepId: step.id,
      ...(ctx.loop ? { iteration: ctx.loop.iteration } : {}),
      url: link.url,
      timeoutAt: c.timeoutAt,
      heartbeatSeconds: c.heartbeatSeconds ?? null,
    };
    const wait: Wait = {
      kind: 'wait',
      status: 'WAITING_CALLBACK',
      update: { callbackId },
      // As an approval: the run waits at the step (inside a loop, in its iteration) until a report or the deadline.
      event: { type: 'callback.requested', data },
      // What ends the wait is numbered after its callback.requested.
      items: (runSeq) => [callbackPut({ ...c, runSeq })],
      after: (run, maxMs) => sendCallbackRequest(run, step, c, link, { io: ctx.io, maxMs }),
    };
    return wait;
  }),
};

/**
 * Send the step's `request` once, after the callback and the wait are written (so an answer that comes
 * at once finds the run waiting). The run is not held meanwhile. A request that fails (not 2xx, no
 * answer, refused by the address checks) reports the callback as failed with its error, unless a
 * report came first. A crash between the wait's write and the request leaves it unsent: the wait
 * then ends at its deadline.
 */
async function sendCallbackRequest(
  e: Execution,
  step: WaitForCallbackStep,
  callback: Callback,
  link: { url: string; token: string },
  { io, maxMs }: { io: StepIO; maxMs: number },
) {
  if (!step.request) return;
  let failure: RunError | undefined;
  try {
    const scope = { ...scopeOf(e), callback: link };
    const ctx = { execution: e, scope, signal: new AbortController().signal, now: Date.now(), io, maxMs };
    const outcome = await httpRequest({ ...step.request, allowFailure: false }, ctx);
    if (outcome.kind === 'failed') failure = outcome.error;
  } catch (err) {
    if (!(err instanceof StepError)) logger.error('callback request failed', { executionId: e.executionId, error: err as Error });
    failure =
      err instanceof StepError ? { code: err.code, message: err.message } : { code: 'REQUEST_FAILED', message: 'the request failed' };
  }
  if (!failure) return;
  const error = { code: failure.code, message: `The callback request failed: ${failure.message}`.slice(0, 1000) };
  await io.failCallback(callback, error, Date.now());
}
