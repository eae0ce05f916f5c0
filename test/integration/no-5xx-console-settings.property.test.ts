import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { resetConfig } from '../../shared/config.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { createSecret } from '../../shared/domain/account-secrets.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createSchedule } from '../../shared/domain/schedules.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { CHANNEL_TYPES } from '../../shared/db/channel-types.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { isConsolePage, type Route } from '../../shared/http/route.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { text, ulidish } from '../support/properties.ts';

/**
 * The settings pages' forms (schedules, secrets, channels) and the schedule preview: whatever their
 * fields hold — plausible values, near misses and junk, signed in with a valid CSRF token so that
 * the handlers run — the answer is a page, a fragment or a redirect, never a 5xx.
 */

type Handler = (e: ReturnType<typeof apiEvent>, c: never) => Promise<{ statusCode: number; headers?: Record<string, string> }>;
const PREFIXES = ['/console/schedules', '/console/secrets', '/console/channels'];
const mine = (routes as readonly Route[]).filter((r) => isConsolePage(r) && PREFIXES.some((p) => r.path.startsWith(p)));
const handlers = new Map<Route, Handler>();

let session: string;
let adminEmail: string;
let workflowId: string;
/** Ids and names that exist in the account: a schedule, a secret, a channel. */
let realIds: string[] = [];

beforeAll(async () => {
  // A "Send test" of the real channel goes nowhere: a closed local port.
  Object.assign(process.env, { SLACK_API_URL: 'http://127.0.0.1:9/slack' });
  resetConfig();
  const account = await givenAccount({ plan: 'pro' });
  adminEmail = account.admin.email;
  const w = await createWorkflow(adminSession(account), {
    name: 'Property',
    definition: WorkflowDefinition.parse({
      variables: { n: { type: 'number', default: 1 } },
      steps: [{ id: 'a', type: 'set', values: {} }],
    }),
    recovery: false,
    editors: [],
  });
  workflowId = w.workflowId;
  const actor = adminSession(account);
  const schedule = await createSchedule(actor, workflowId, {
    expression: 'cron(0 3 * * ? *)',
    timezone: 'Europe/Berlin',
    variables: {},
    enabled: true,
    overlap: 'skip',
  });
  await createSecret(actor, { name: 'PROPERTY_SECRET', value: 'v-property' });
  const channel = await createChannel(actor, {
    type: CHANNEL_TYPES[0],
    name: 'prop',
    botToken: 'xoxb-0000000000-prop',
    signingSecret: 's'.repeat(32),
  });
  realIds = [schedule.scheduleId, 'PROPERTY_SECRET', channel.id];
  for (const r of mine)
    handlers.set(r, (await import(/* @vite-ignore */ new URL(`../../functions/${r.handler}.ts`, import.meta.url).href)).handler as Handler);
});

/** Values a field of these forms may get: plausible ones, near misses, junk. */
const fieldValue = fc.oneof(
  fc.constantFrom(
    'cron(30 2 * * ? *)',
    'cron(0 9 ? * MON-FRI *)',
    'cron(61 2 * * ? *)',
    'rate(5 minutes)',
    'rate(0 minutes)',
    'at(2027-03-28T02:30:00)',
    'at(1969-01-01T00:00:00)',
    'Europe/Berlin',
    'UTC',
    'Mars/Olympus',
    'europe/berlin',
    '2027-03-26T00:00',
    '2027-03-28T02:30',
    '2027-02-30T10:00',
    '9999-12-31T23:59',
    '{"n": 2}',
    '{"n": "x"}',
    '[1]',
    'null',
    'skip',
    'allow',
    'true',
    'preview',
    'create',
    'API_TOKEN',
    'api.example.com\n*.example.com',
    'xoxb-0000000000-abcdefghij',
    'https://example.com/hook',
    '••••abcd',
    '',
  ),
  text,
  fc.string({ maxLength: 300 }),
);
const FIELDS = [
  'workflowId',
  'name',
  'expression',
  'timezone',
  'overlap',
  'startAt',
  'endAt',
  'variables',
  'enabled',
  'intent',
  'value',
  'allowedHosts',
  'members',
  'type',
  'botToken',
  'signingSecret',
  'defaultChannel',
  'from',
  'webhookUrl',
  'to',
] as const;

const forms = fc.record({
  fields: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 10 }),
  realWorkflow: fc.boolean(),
  csrf: fc.constantFrom('valid', 'valid', 'valid', 'junk'),
});

const requests = (r: Route) =>
  fc.record({
    params: fc.dictionary(
      fc.constantFrom(...(r.path.match(/\{(\w+)\}/g) ?? ['{none}']).map((p) => p.slice(1, -1))),
      fc.oneof(
        ulidish,
        text,
        fc.constantFrom('delete', 'run', 'pause', 'resume', 'edit', 'test', 'API_TOKEN'),
        fc.nat().map((i) => realIds[i % realIds.length] as string),
      ),
      { maxKeys: 3 },
    ),
    query: fc.option(fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }), { nil: undefined }),
    form: forms,
  });

describe('no request makes a settings page answer 5xx', () => {
  it('has the routes it tests', () => {
    expect(mine.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'GET /console/schedules/preview',
        'POST /console/schedules/new',
        'POST /console/schedules/{scheduleId}/{action}',
      ]),
    );
  });
  for (const r of mine) {
    it(`${r.method} ${r.path}`, async () => {
      const handler = handlers.get(r) as Handler;
      session = await sessionOf(adminEmail);
      await fc.assert(
        fc.asyncProperty(requests(r), async (q) => {
          const fields: Record<string, string> = { ...q.form.fields };
          if (q.form.realWorkflow) fields.workflowId = workflowId;
          const body = new URLSearchParams({ ...fields, csrf: q.form.csrf === 'valid' ? csrfToken(session) : 'x' }).toString();
          const event = apiEvent({
            method: r.method,
            path: r.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent((q.params[k] ?? 'x').toWellFormed())),
            headers: r.method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
            params: q.params,
            ...(q.query ? { query: q.query } : {}),
            ...(r.method === 'POST' ? { body } : {}),
            sourceIp: '203.0.113.9',
          });
          event.cookies = [`flowgate_session=${session}`];
          // The page's console function, given the route key API Gateway matched (its router serves that page).
          event.routeKey = `${r.method} ${r.path}`;
          const res = await handler(event, lambdaContext());
          const what = `${r.method} ${r.path} ${JSON.stringify(q).slice(0, 500)} -> ${res.statusCode}`;
          expect(res.statusCode, what).toBeLessThan(500);
          if (res.statusCode >= 400) expect(res.headers?.['content-type'], what).toBe('text/html; charset=utf-8');
        }),
        { numRuns: 80 },
      );
    });
  }
});
