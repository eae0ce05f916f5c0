// POST /console/webhooks/{id}/requests/{requestId}/replay: "Replay" on a request's page (CSRF checked
// before this runs), as the API's replay (the same domain function: on the audit log, once per key);
// then 303 to the new run. Refused by the webhook's current configuration (disabled, allowlist, rate
// limit) or the request itself: the request's page again with why, at the refusal's status.
import { route } from './replay.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { inboundLogRequest } from '../../../../shared/domain/inbound-log.ts';
import { replayRequest } from '../../../../shared/domain/inbound-replay.ts';
import { AppError } from '../../../../shared/errors.ts';
import { httpStatus } from '../../../../shared/http-status.ts';
import { requestPage } from './request-view.tsx';

/** Refusals shown on the request's page; anything else (an unknown webhook or request: 404) is an error page. */
const SHOWN = new Set(['REQUEST_NOT_REPLAYABLE', 'WEBHOOK_DISABLED', 'IP_NOT_ALLOWED', 'RATE_LIMITED', 'IDEMPOTENCY_KEY_REUSED']);

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  const p = session.principal;
  const key = form.get('replayKey') ?? '';
  // The form's key, made with the page: 1 to 255 printable ASCII characters, as the API's header.
  const idempotencyKey = /^[\x21-\x7e]{1,255}$/.test(key) ? key : undefined;
  try {
    const { result } = await replayRequest(p, params.id, params.requestId, idempotencyKey);
    return seeOther(`/console/runs/${result.executionId}`);
  } catch (e) {
    if (!(e instanceof AppError) || !SHOWN.has(e.code)) throw e;
    return requestPage(session, await inboundLogRequest(p, params.id, params.requestId), { refusal: e.message, status: httpStatus(e) });
  }
});
