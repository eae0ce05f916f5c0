import { describe, expect, it } from 'vitest';
import type { Webhook } from '../../shared/db/entities/webhook.ts';
import { triggerContextOf } from '../../shared/domain/trigger-context.ts';

/** `$trigger.headers` (shared/domain/trigger-context.ts, docs/workflows.md "Control flow"): no credential reaches a run. */
const webhook = { webhookId: 'wh_1', accountId: 'acc_1', workflowId: 'wf_1', triggerContext: true } as unknown as Webhook;

describe('$trigger.headers', () => {
  it('drops credentials and signatures by name pattern, not only the named ones, and keeps harmless headers', () => {
    const credentials = {
      authorization: 'Bearer a',
      'proxy-authorization': 'Basic b',
      cookie: 'session=c',
      'x-api-key': 'd',
      authentication: 'e',
      'x-authorization': 'f',
      'x-auth-key': 'g',
      'ocp-apim-subscription-key': 'h',
      'x-functions-key': 'i',
      'x-password': 'j',
      'x-shopify-hmac-sha256': 'k',
      'paypal-transmission-sig': 'l',
      'x-hub-signature-256': 'm',
      'x-amz-security-token': 'n',
      'x-client-secret': 'o',
      'x-session-id': 'p',
      'x-access-key': 'q',
      'x-apikey': 'r',
      'x-csrf-token': 's',
      'x-user-pass': 't',
      'x-jwt-assertion': 'u',
    };
    const harmless = {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/abc',
      'x-github-event': 'push',
      'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      'x-request-id': 'req-1',
      'content-length': '42',
      'x-custom-tag': 'blue',
      accept: '*/*',
    };
    const context = triggerContextOf(webhook, { ...credentials, ...harmless }, {});
    expect(context?.headers).toEqual(harmless);
    // Whatever the case the sender wrote them in.
    const upper = Object.fromEntries(Object.entries(credentials).map(([k, v]) => [k.toUpperCase(), v]));
    expect(triggerContextOf(webhook, { ...upper, 'Content-Type': 'text/plain' }, {})?.headers).toEqual({ 'content-type': 'text/plain' });
  });

  it('keeps nothing for a webhook whose workflow does not read $trigger', () => {
    expect(triggerContextOf({ ...webhook, triggerContext: undefined }, { 'content-type': 'application/json' }, {})).toBeUndefined();
  });
});
