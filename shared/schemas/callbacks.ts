import * as z from 'zod';
import { CallbackError, CallbackStatus } from '../db/entities/callback.ts';
import { idOf } from './common.ts';

export const CallbackParams = z.object({ callbackId: idOf('CALLBACK_NOT_FOUND', 'Callback') });

/** A report: success with an optional output object (`$steps.<id>.output`), or failure with the error the step fails with. */
export const ReportBody = z.discriminatedUnion('status', [
  z.object({ status: z.literal('success'), output: z.record(z.string(), z.unknown()).optional() }),
  z.object({ status: z.literal('failure'), error: CallbackError }),
]);

export const CallbackView = z.object({
  callbackId: z.string(),
  executionId: z.string(),
  stepId: z.string(),
  status: CallbackStatus,
  /** When the wait ends unless reported (the earlier of the timeout and the next heartbeat's due time). */
  deadline: z.number(),
  timeoutAt: z.number(),
  reportedAt: z.number().optional(),
});
