import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SignatureScheme, Webhook } from '../../shared/db/entities/webhook.ts';
import { AppError } from '../../shared/errors.ts';
import { httpStatus } from '../../shared/http-status.ts';
import { deliveryId, handshake, verifySignature } from '../../shared/http/webhook-senders.ts';
import { isStandardWebhooksSecret } from '../../shared/schemas/webhooks.ts';

/**
 * Each scheme against its sender's documented example (GitHub's, Slack's, the Standard Webhooks
 * libraries' test vector); Stripe publishes its algorithm but no vector, so its requests are signed
 * here by that algorithm. Then the refusals: wrong, missing, stale and future.
 */

const refusal = (f: () => void) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return { status: httpStatus(e as AppError), code: (e as AppError).code };
  }
  return undefined;
};
const INVALID = { status: 401, code: 'INVALID_SIGNATURE' };
const EXPIRED = { status: 401, code: 'SIGNATURE_EXPIRED' };
const hex = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

afterEach(() => vi.useRealTimers());

describe('github', () => {
  // docs.github.com, "Validating webhook deliveries": the example secret, payload and signature.
  const secret = "It's a Secret to Everybody";
  const body = Buffer.from('Hello, World!');
  const signature = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  it("accepts GitHub's documented example, and refuses a changed body, a changed signature or none", () => {
    expect(refusal(() => verifySignature('github', secret, { 'x-hub-signature-256': signature }, body))).toBeUndefined();
    expect(refusal(() => verifySignature('github', secret, { 'x-hub-signature-256': signature }, Buffer.from('Hello, World?')))).toEqual(
      INVALID,
    );
    expect(refusal(() => verifySignature('github', secret, { 'x-hub-signature-256': `${signature.slice(0, -1)}f` }, body))).toEqual(
      INVALID,
    );
    expect(refusal(() => verifySignature('github', secret, {}, body))).toEqual(INVALID);
    // The legacy header is not GitHub's.
    expect(refusal(() => verifySignature('github', secret, { 'x-webhook-signature': signature }, body))).toEqual(INVALID);
  });
});

describe('slack', () => {
  // api.slack.com, "Verifying requests from Slack": the example signing secret, timestamp, body and signature.
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const ts = '1531420618';
  const body = Buffer.from(
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  );
  const headers = {
    'x-slack-request-timestamp': ts,
    'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
  };
  const at = Number(ts) * 1000;

  it("accepts Slack's documented example at its time, and up to 5 minutes either side", () => {
    for (const now of [at, at - 300_000, at + 300_000])
      expect(refusal(() => verifySignature('slack', secret, headers, body, now))).toBeUndefined();
  });

  it('refuses the same request more than 5 minutes late or early (SIGNATURE_EXPIRED), a wrong signature, and missing headers', () => {
    expect(refusal(() => verifySignature('slack', secret, headers, body, at + 301_000))).toEqual(EXPIRED);
    expect(refusal(() => verifySignature('slack', secret, headers, body, at - 301_000))).toEqual(EXPIRED);
    expect(refusal(() => verifySignature('slack', 'another secret', headers, body, at))).toEqual(INVALID);
    expect(refusal(() => verifySignature('slack', secret, { ...headers, 'x-slack-request-timestamp': '1531420619' }, body, at))).toEqual(
      INVALID,
    );
    expect(refusal(() => verifySignature('slack', secret, { 'x-slack-signature': headers['x-slack-signature'] }, body, at))).toEqual(
      INVALID,
    );
    expect(refusal(() => verifySignature('slack', secret, { 'x-slack-request-timestamp': ts }, body, at))).toEqual(INVALID);
  });
});

describe('standard-webhooks', () => {
  // The Standard Webhooks reference libraries' test vector.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = Buffer.from('{"test": 2432232314}');
  const headers = {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  };
  const at = 1614265330_000;
  const verifyAt = (now: number, h: Record<string, string>, b = body) => {
    vi.useFakeTimers({ toFake: ['Date'], now }); // the maintained package reads the clock itself
    return refusal(() => verifySignature('standard-webhooks', secret, h, b, now));
  };

  it('accepts the test vector, also as one entry of a space-separated list', () => {
    expect(verifyAt(at, headers)).toBeUndefined();
    expect(
      verifyAt(at + 299_000, { ...headers, 'webhook-signature': `v1,bm90IGl0 ${headers['webhook-signature']} v2,xyz` }),
    ).toBeUndefined();
  });

  it('refuses stale and future timestamps, a changed id or body, and missing headers', () => {
    expect(verifyAt(at + 301_000, headers)).toEqual(EXPIRED);
    expect(verifyAt(at - 301_000, headers)).toEqual(EXPIRED);
    expect(verifyAt(at, { ...headers, 'webhook-id': 'msg_other' })).toEqual(INVALID);
    expect(verifyAt(at, headers, Buffer.from('{"test": 2432232315}'))).toEqual(INVALID);
    expect(verifyAt(at, { ...headers, 'webhook-signature': 'v1,' })).toEqual(INVALID);
    const { 'webhook-id': _, ...noId } = headers;
    expect(verifyAt(at, noId)).toEqual(INVALID);
  });

  it('takes secrets as the specification writes them: whsec_ and the base64 of 24 to 64 bytes', () => {
    expect(isStandardWebhooksSecret(secret)).toBe(true);
    expect(isStandardWebhooksSecret(`whsec_${Buffer.alloc(64, 7).toString('base64')}`)).toBe(true);
    expect(isStandardWebhooksSecret(`whsec_${Buffer.alloc(23, 7).toString('base64')}`)).toBe(false);
    expect(isStandardWebhooksSecret(`whsec_${Buffer.alloc(65, 7).toString('base64')}`)).toBe(false);
    expect(isStandardWebhooksSecret('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe(false);
    expect(isStandardWebhooksSecret('whsec_not base64!')).toBe(false);
  });

  it('agrees with the maintained package for any id, time and body it signs', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[\w-]{1,40}$/), fc.integer({ min: -299, max: 299 }), fc.json(), (id, skew, json) => {
        const now = at + skew * 1000;
        const signature = new StandardWebhook(secret).sign(id, new Date(at), json);
        expect(
          verifyAt(now, { 'webhook-id': id, 'webhook-timestamp': String(at / 1000), 'webhook-signature': signature }, Buffer.from(json)),
        ).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });
});

describe('stripe', () => {
  const secret = 'whsec_stripe_test_secret';
  const body = Buffer.from('{"id":"evt_1","type":"payment_intent.succeeded"}');
  const t = 1_780_000_000;
  const sign = (ts: number, b = body) => hex(secret, `${ts}.${b.toString()}`);

  it('accepts t=…,v1=… over "<t>.<body>", also when one of several v1 entries matches (secret rotation)', () => {
    const at = t * 1000;
    expect(refusal(() => verifySignature('stripe', secret, { 'stripe-signature': `t=${t},v1=${sign(t)}` }, body, at))).toBeUndefined();
    expect(
      refusal(() =>
        verifySignature('stripe', secret, { 'stripe-signature': `t=${t},v1=${'0'.repeat(64)},v1=${sign(t)},v0=abc` }, body, at),
      ),
    ).toBeUndefined();
  });

  it('refuses stale and future timestamps, a v1 over another time or body, only v0, and no header', () => {
    const at = t * 1000;
    const header = { 'stripe-signature': `t=${t},v1=${sign(t)}` };
    expect(refusal(() => verifySignature('stripe', secret, header, body, at + 301_000))).toEqual(EXPIRED);
    expect(refusal(() => verifySignature('stripe', secret, header, body, at - 301_000))).toEqual(EXPIRED);
    expect(refusal(() => verifySignature('stripe', secret, { 'stripe-signature': `t=${t},v1=${sign(t + 1)}` }, body, at))).toEqual(INVALID);
    expect(refusal(() => verifySignature('stripe', secret, header, Buffer.from('{"id":"evt_2"}'), at))).toEqual(INVALID);
    expect(refusal(() => verifySignature('stripe', secret, { 'stripe-signature': `t=${t},v0=${sign(t)}` }, body, at))).toEqual(INVALID);
    expect(refusal(() => verifySignature('stripe', secret, {}, body, at))).toEqual(INVALID);
  });
});

describe('legacy-hmac', () => {
  it('accepts sha256=<hex> or bare hex of the raw body, in any case', () => {
    const body = Buffer.from('{"a":1}');
    const sig = hex('legacy-secret-0123456789', '{"a":1}');
    for (const header of [sig, `sha256=${sig}`, `SHA256=${sig.toUpperCase()}`])
      expect(
        refusal(() => verifySignature('legacy-hmac', 'legacy-secret-0123456789', { 'x-webhook-signature': header }, body)),
      ).toBeUndefined();
    expect(
      refusal(() => verifySignature('legacy-hmac', 'legacy-secret-0123456789', { 'x-webhook-signature': sig }, Buffer.from('{"a":2}'))),
    ).toEqual(INVALID);
  });
});

describe('any scheme, any headers and body', () => {
  it('either accepts or refuses with 401 INVALID_SIGNATURE / SIGNATURE_EXPIRED, never anything else', () => {
    const schemes: SignatureScheme[] = ['legacy-hmac', 'standard-webhooks', 'github', 'stripe', 'slack'];
    const names = [
      'x-webhook-signature',
      'x-hub-signature-256',
      'stripe-signature',
      'x-slack-signature',
      'x-slack-request-timestamp',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...schemes),
        fc.dictionary(fc.constantFrom(...names), fc.string({ maxLength: 80 })),
        fc.uint8Array({ maxLength: 200 }),
        (scheme, headers, body) => {
          const r = refusal(() => verifySignature(scheme, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', headers, Buffer.from(body)));
          if (r) expect([INVALID, EXPIRED]).toContainEqual(r);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('delivery ids and handshakes', () => {
  const hook = (signatureScheme: SignatureScheme, more: Partial<Webhook> = {}) =>
    ({ secretKey: 'secret-0123456789abcdef', signatureScheme, ...more }) as Webhook;

  it("takes each sender's own id, and none where the sender sends none or the webhook is not signed", () => {
    expect(deliveryId(hook('standard-webhooks'), { 'webhook-id': 'msg_1' }, {})).toBe('msg_1');
    expect(deliveryId(hook('github'), { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' }, {})).toBe(
      '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    );
    expect(deliveryId(hook('stripe'), {}, { id: 'evt_1' })).toBe('evt_1');
    expect(deliveryId(hook('slack'), {}, { event_id: 'Ev123' })).toBe('Ev123');
    expect(deliveryId(hook('slack'), {}, { event_id: 42 })).toBeUndefined();
    expect(deliveryId(hook('legacy-hmac'), { 'webhook-id': 'msg_1' }, { id: 'x' })).toBeUndefined();
    expect(deliveryId(hook('github', { apiKeyId: 'k' }), { 'x-github-delivery': 'd' }, {})).toBeUndefined();
    expect(deliveryId(hook('github'), { 'x-github-delivery': 'a'.repeat(256) }, {})).toBeUndefined();
  });

  it("answers Slack's url_verification with its challenge and GitHub's ping, nothing else", () => {
    expect(handshake(hook('slack'), {}, { type: 'url_verification', challenge: 'c-1' })).toEqual({ challenge: 'c-1' });
    expect(handshake(hook('slack'), {}, { type: 'event_callback', challenge: 'c-1' })).toBeUndefined();
    expect(handshake(hook('github'), { 'x-github-event': 'ping' }, {})).toEqual({ ok: true, event: 'ping' });
    expect(handshake(hook('github'), { 'x-github-event': 'push' }, {})).toBeUndefined();
    expect(handshake(hook('legacy-hmac'), { 'x-github-event': 'ping' }, { type: 'url_verification', challenge: 'c' })).toBeUndefined();
  });
});
