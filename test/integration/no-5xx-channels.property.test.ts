import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/channels/create.ts';
import { handler as deleteHandler } from '../../functions/http/channels/delete.ts';
import { handler as getHandler } from '../../functions/http/channels/get.ts';
import { handler as listHandler } from '../../functions/http/channels/list.ts';
import { handler as testHandler } from '../../functions/http/channels/test.ts';
import { handler as updateHandler } from '../../functions/http/channels/update.ts';
import { handler as interactionsHandler } from '../../functions/http/integrations/slack-interactions.ts';
import { handler as updateMemberHandler } from '../../functions/http/members/update.ts';
import { handler as createWorkflowHandler } from '../../functions/http/workflows/create.ts';
import { resetConfig } from '../../shared/config.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { givenAccount } from '../support/fixtures.ts';
import { type Body, b64, check, good, request, runsWith, serialize, text } from '../support/properties.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Whatever a client (or anyone posing as Slack) sends to the approval-channel routes, the answer is
 * a 2xx or a 4xx problem document, never a 5xx; no answer carries a write-only field.
 */

const RUNS = { numRuns: 60 } as const;
const SIGNING = '0123456789abcdef0123456789abcdef';
const TOKEN = 'xoxb-1-property-token';
const MASKED_TOKEN = `••••${TOKEN.slice(-4)}`;
let chat: Awaited<ReturnType<typeof startChatListener>>;
let adminSession: string;
let memberSession: string;
let slackId: string;
let memberId: string;

beforeAll(async () => {
  chat = await startChatListener();
  Object.assign(process.env, { SLACK_API_URL: chat.slackApi, HTTP_STEP_ALLOWLIST: '127.0.0.1/32', SLACK_RESPONSE_HOSTS: '127.0.0.1' });
  resetConfig();
  const a = await givenAccount();
  memberId = a.member.userId;
  [adminSession, memberSession] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
  const slack = await check(
    createHandler,
    'POST',
    '/api/channels',
    good(`Bearer ${adminSession}`, {
      json: { type: 'slack', name: 'known', botToken: TOKEN, signingSecret: SIGNING, defaultChannel: '#x' },
    }),
    [201],
  );
  slackId = slack.json.id;
});
afterAll(() => chat.stop());

const channelName = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/),
  fc.constantFrom('known', 'KNOWN', '', ' x', 'a'.repeat(65)),
  text,
);
const slackFields = fc.record(
  {
    type: fc.constantFrom('slack', 'SLACK', 'email', 'teams', 'fax'),
    name: channelName,
    // The view's masks (sent back, they keep the stored value), masks that are not the view's, and new values.
    botToken: fc.oneof(
      fc.constantFrom(TOKEN, 'xoxb-', 'xoxp-abcdefgh12', MASKED_TOKEN, '••••', '••••xxxx', `${'•'.repeat(4)}${'a'.repeat(3000)}`),
      text,
    ),
    signingSecret: fc.oneof(fc.constantFrom(SIGNING, 'short', '••••', '••••abcd'), fc.stringMatching(/^[0-9a-f]{10,140}$/), text),
    defaultChannel: fc.oneof(fc.constantFrom('#deploys', 'C0123ABCD', 'deploys', '#', null), text),
    from: fc.oneof(fc.emailAddress(), text),
    webhookUrl: fc.oneof(
      fc.webUrl(),
      fc.constantFrom(
        `http://127.0.0.1:1/teams/x`,
        'https://example.com/h',
        'http://example.com/h',
        'ftp://x',
        'http://127.0.0.1:1/••••',
        '••••',
      ),
      text,
    ),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);
const bodies = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
  fc.oneof(
    fc.constant<Body>({ isBase64Encoded: false }),
    fc.json().map((body) => ({ body, isBase64Encoded: false })),
    text.map((body) => ({ body, isBase64Encoded: false })),
    { weight: 8, arbitrary: shaped.map((v) => ({ body: serialize(v), isBase64Encoded: false })) },
    shaped.map((v) => ({ body: b64(serialize(v)), isBase64Encoded: true })),
  );
const sessionAuth = () =>
  fc.option(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(`Bearer ${adminSession}`, `Bearer ${memberSession}`) }, text), {
    nil: undefined,
    freq: 8,
  });
const idParams = () =>
  fc.option(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(slackId, 'ch_01jzzzzzzzzzzzzzzzzzzzzzzz', 'ch_', '').map((channelId) => ({ channelId })) },
      text.map((channelId) => ({ channelId })),
    ),
    { nil: undefined, freq: 8 },
  );
const noSecrets = (body: string | undefined) => {
  expect(body ?? '').not.toContain(TOKEN);
  expect(body ?? '').not.toContain(SIGNING);
};

describe('no request makes an approval-channel handler answer 5xx', { timeout: 180_000 }, () => {
  it('POST /api/channels', async () => {
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(slackFields)), async (req) => {
        const res = await check(createHandler, 'POST', '/api/channels', req, [201, 400, 401, 403, 409, 413, 415]);
        noSecrets(res.body);
      }),
      RUNS,
    );
  });

  it('PUT, GET and DELETE /api/channels/{channelId}', async () => {
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(slackFields), { params: idParams() }), async (req) => {
        const path = '/api/channels/{channelId}';
        noSecrets((await check(updateHandler, 'PUT', path, req, [200, 400, 401, 403, 404, 409, 413, 415])).body);
        noSecrets((await check(getHandler, 'GET', path, { ...req, body: { isBase64Encoded: false } }, [200, 401, 404])).body);
      }),
      runsWith(
        RUNS,
        good(`Bearer ${adminSession}`, { params: { channelId: slackId }, json: { defaultChannel: '#y' } }),
        // The view sent back as it is (a round trip), and with another type.
        good(`Bearer ${adminSession}`, {
          params: { channelId: slackId },
          json: { type: 'slack', name: 'known', botToken: MASKED_TOKEN, signingSecret: '••••', defaultChannel: '#x' },
        }),
        good(`Bearer ${adminSession}`, { params: { channelId: slackId }, json: { type: 'teams', webhookUrl: 'http://127.0.0.1:1/••••' } }),
      ),
    );
    noSecrets((await check(listHandler, 'GET', '/api/channels', good(`Bearer ${memberSession}`), [200])).body);
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue()), { params: idParams() }), async (req) => {
        await check(deleteHandler, 'DELETE', '/api/channels/{channelId}', req, [204, 401, 403, 404, 413]);
      }),
      { numRuns: 30 },
    );
  });

  it('POST /api/channels/{channelId}/test', async () => {
    const { json } = await check(
      createHandler,
      'POST',
      '/api/channels',
      good(`Bearer ${adminSession}`, { json: { type: 'slack', name: 'tested', botToken: TOKEN, signingSecret: SIGNING } }),
      [201],
    );
    const params = fc.constantFrom({ channelId: json.id }, { channelId: 'ch_01jzzzzzzzzzzzzzzzzzzzzzzz' }, { channelId: '' });
    await fc.assert(
      fc.asyncProperty(
        request(sessionAuth(), bodies(fc.record({ to: fc.oneof(text, fc.constantFrom('#x', '#missing')) })), { params }),
        async (req) => {
          const res = await check(testHandler, 'POST', '/api/channels/{channelId}/test', req, [200, 400, 401, 403, 404, 413, 415]);
          noSecrets(res.body);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('POST /api/integrations/slack/{channelId}/interactions, signed or not', async () => {
    const payload = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          type: fc.constantFrom('block_actions', 'view_submission', 'x'),
          user: fc.record({ id: fc.oneof(fc.constantFrom('U1', 'UNKNOWN'), text) }, { requiredKeys: [] }),
          // Slack's host (the listener here), a closed port, and what no response_url may reach (issue 31, finding 11).
          response_url: fc.oneof(
            fc.constantFrom(
              `${chat.base}/respond/p`,
              'http://127.0.0.1:1/x',
              'not a url',
              'http://[::1]:1/x',
              'http://0.0.0.0:1/x',
              'http://localhost:1/x',
              'http://169.254.169.254/latest/meta-data/',
              `${chat.base}/redirect/p?to=${encodeURIComponent('http://[::1]:1/x')}`,
              `${chat.base}/redirect/p?to=${encodeURIComponent('http://169.254.169.254/')}`,
            ),
            text,
          ),
          actions: fc.array(
            fc.record(
              {
                action_id: fc.constantFrom('approve', 'reject', 'review', 'x'),
                value: fc.oneof(fc.constantFrom('ap_01jzzzzzzzzzzzzzzzzzzzzzzz'), text, fc.jsonValue()),
              },
              { requiredKeys: [] },
            ),
            { maxLength: 2 },
          ),
        },
        { requiredKeys: [] },
      ),
    );
    const raw = fc.oneof(
      payload.map((p) => new URLSearchParams({ payload: JSON.stringify(p) }).toString()),
      text,
      // Malformed JSON, and JSON that is no object (found by this property: `payload=null` was a 500).
      fc.constantFrom('payload=%7B', 'payload=null', 'payload=1', 'payload=%5B%5D', 'payload=%22x%22', 'payload=%7B%22actions%22%3A5%7D'),
    );
    const signed = fc.record({
      raw,
      skew: fc.oneof(fc.constant(0), fc.integer({ min: -1000, max: 1000 })),
      sign: fc.boolean(),
      id: fc.constantFrom(slackId, 'ch_01jzzzzzzzzzzzzzzzzzzzzzzz', 'x'.repeat(70)),
    });
    await fc.assert(
      fc.asyncProperty(signed, async ({ raw, skew, sign, id }) => {
        const ts = String(Math.floor(Date.now() / 1000) + skew);
        const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': ts };
        if (sign) headers['x-slack-signature'] = `v0=${createHmac('sha256', SIGNING).update(`v0:${ts}:${raw}`).digest('hex')}`;
        const res = await check(
          interactionsHandler,
          'POST',
          `/api/integrations/slack/${id}/interactions`,
          { headers, params: { channelId: id }, body: { body: raw, isBase64Encoded: false }, sourceIp: '203.0.113.9' },
          [200, 401, 404, 413],
        );
        if (!sign || Math.abs(skew) > 300 || id !== slackId) expect(res.status).not.toBe(200);
      }),
      RUNS,
    );
    // Signed payloads that are JSON but no object (`payload=null` was a 500): each one, every run, on a
    // Slack channel of their own (the properties above may have deleted `slackId`).
    const own = await check(
      createHandler,
      'POST',
      '/api/channels',
      good(`Bearer ${adminSession}`, { json: { type: 'slack', name: 'shapes', botToken: TOKEN, signingSecret: SIGNING } }),
      [201],
    );
    const ownId = own.json.id as string;
    for (const raw of ['payload=null', 'payload=1', 'payload=%5B%5D', 'payload=%22x%22', 'payload=%7B%22actions%22%3A5%7D']) {
      const ts = String(Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', SIGNING).update(`v0:${ts}:${raw}`).digest('hex')}`;
      const headers = {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': ts,
        'x-slack-signature': signature,
      };
      const request = { headers, params: { channelId: ownId }, body: { body: raw, isBase64Encoded: false }, sourceIp: '198.51.100.23' };
      const res = await check(interactionsHandler, 'POST', `/api/integrations/slack/${ownId}/interactions`, request, [200]);
      expect(res.status, raw).toBe(200);
    }
  });

  it("a member's slackUserId and an approval step's notify", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom('U0123ABCD', null, 'W1X'), text, fc.jsonValue()), async (slackUserId) => {
        await check(
          updateMemberHandler,
          'PUT',
          `/api/members/${memberId}`,
          good(`Bearer ${adminSession}`, { params: { id: memberId }, json: { slackUserId } }),
          [200, 400],
        );
      }),
      { numRuns: 30 },
    );
    const notify = fc.oneof(
      fc.array(
        fc.record(
          {
            channel: fc.oneof(channelName, fc.constant('known')),
            to: fc.oneof(fc.constantFrom('#deploys', 'C0123ABCD', ['role:admin'], [], ['x']), text, fc.jsonValue()),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
      fc.jsonValue(),
    );
    await fc.assert(
      fc.asyncProperty(notify, async (n) => {
        const definition = { steps: [{ id: 'a', type: 'manual_approval', title: 't', reviewers: ['role:admin'], notify: n }] };
        await check(
          createWorkflowHandler,
          'POST',
          '/api/workflows',
          good(`Bearer ${adminSession}`, { json: { name: 'w', definition } }),
          [201, 400],
        );
      }),
      { numRuns: 40 },
    );
  });
});
