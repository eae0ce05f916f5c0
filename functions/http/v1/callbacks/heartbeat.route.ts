import type { Route } from '../../../../shared/http/route.ts';
import { CALLBACK_PATH } from '../../../../shared/links.ts';
import { CallbackParams, CallbackView } from '../../../../shared/schemas/callbacks.ts';
import { callbackToken, readWrite, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: `${CALLBACK_PATH}/heartbeat`,
  handler: 'http/v1/callbacks/heartbeat',
  summary: 'Tell a waiting run its callback is still being worked on (the next heartbeat is due within heartbeatSeconds)',
  tag: 'Callbacks V1',
  auth: callbackToken,
  grants: readWrite,
  params: CallbackParams,
  response: CallbackView,
  errors: [...refuses(409, 'CALLBACK_ALREADY_HANDLED')],
} as const satisfies Route;
