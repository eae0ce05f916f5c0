import * as z from 'zod';
import { idOf } from './common.ts';
import { TriggerResult } from './webhooks.ts';

// The inbound log's routes (docs/webhooks.md "Why was my request refused?").

export const InboundParams = z.object({ id: idOf('WEBHOOK_NOT_FOUND', 'Webhook') });
export const InboundRequestParams = z.object({
  id: idOf('WEBHOOK_NOT_FOUND', 'Webhook'),
  // Checked after the webhook (an id of no known shape answers as an unknown one: REQUEST_NOT_FOUND once
  // the webhook is found), so a malformed request id never answers before an unknown webhook does.
  requestId: z.string(),
});
export const InboundQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().max(4096).optional(),
});

export const InboundRequestView = z.object({
  requestId: z.string().describe('`rq_…` for a refused request, the run id (`ex_…`) for an accepted one'),
  at: z.number(),
  ip: z.string().nullable(),
  method: z.string(),
  status: z.number().int().describe('the HTTP status the sender was answered with'),
  code: z.string().nullable().describe("the refusal's problem code; null when accepted"),
  executionId: z.string().optional().describe('the run an accepted request started'),
  headers: z
    .record(z.string(), z.string())
    .describe('credentials, signatures and cookies masked; an accepted request has the headers its run kept ($trigger), else none'),
  body: z.string().describe('the body as text, up to 16 KiB'),
  bodyTruncated: z.boolean(),
  replayable: z.boolean().describe('POST …/replay may start a run of it'),
});
export const InboundRequestList = z.object({
  items: z.array(InboundRequestView),
  nextCursor: z.string().nullable(),
  refused: z.record(z.string(), z.number()).describe('refusals counted by code, recorded or not'),
});
export const ReplayResult = TriggerResult.extend({ replayOf: z.string() });
