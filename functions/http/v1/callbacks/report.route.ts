import type { Route } from '../../../../shared/http/route.ts';
import { CALLBACK_PATH } from '../../../../shared/links.ts';
import { CallbackParams, CallbackView, ReportBody } from '../../../../shared/schemas/callbacks.ts';
import { CALLBACK_BYTES, callbackToken, refuses, startsRuns } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: CALLBACK_PATH,
  handler: 'http/v1/callbacks/report',
  summary: "Report a wait_for_callback's outcome (success with an output, or failure), exactly once",
  tag: 'Callbacks V1',
  auth: callbackToken,
  // Moving the run sends its message and its events' notifications.
  grants: startsRuns,
  params: CallbackParams,
  body: ReportBody,
  response: CallbackView,
  maxBodyBytes: CALLBACK_BYTES,
  errors: [...refuses(409, 'CALLBACK_ALREADY_HANDLED', 'CONFLICT')],
} as const satisfies Route;
