import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/schedules/create.ts';
import { handler as deleteHandler } from '../../functions/http/schedules/delete.ts';
import { handler as eventsHandler } from '../../functions/http/schedules/events.ts';
import { handler as getHandler } from '../../functions/http/schedules/get.ts';
import { handler as listHandler } from '../../functions/http/schedules/list.ts';
import { handler as runHandler } from '../../functions/http/schedules/run.ts';
import { handler as updateHandler } from '../../functions/http/schedules/update.ts';
import { getSchedule } from '../../shared/db/entities/schedule.ts';
import { fireSchedule } from '../../shared/domain/schedule-fires.ts';
import { createSchedule, pageScheduleEvents } from '../../shared/domain/schedules.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { ScheduleView } from '../../shared/schemas/schedules.ts';
import { useOwnQueues, useOwnTable } from '../support/engine.ts';
import type { givenAccount } from '../support/fixtures.ts';
import { b64, type Body, check, good, mutated, request, runsWith, serialize, text, tokenBody, ulidish } from '../support/properties.ts';
import { givenPropertyAccounts } from '../support/sessions.ts';

/**
 * Whatever a console client sends to the schedule routes, the answer is a 2xx or a 4xx problem
 * document, never a 5xx: expressions of every kind and none, timezones, variables against declared
 * types, instants, ids of other accounts. A table of its own: no other file's local stack may load
 * (and fire) the schedules these create.
 */

const RUNS = { numRuns: 80 } as const;
const DEFINITION = WorkflowDefinition.parse({
  variables: { count: { type: 'number', default: 1 }, who: { type: 'string' }, flags: { type: 'array' } },
  steps: [{ id: 'greet', type: 'set', values: { greeting: 'hello' } }],
});

const bodies = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
  fc.oneof(
    fc.constant<Body>({ isBase64Encoded: false }),
    fc.json().map((body) => ({ body, isBase64Encoded: false })),
    text.map((body) => ({ body, isBase64Encoded: false })),
    fc.uint8Array({ maxLength: 300 }).map((u) => ({ body: b64(u), isBase64Encoded: true })),
    { weight: 10, arbitrary: shaped.map((v) => ({ body: serialize(v), isBase64Encoded: false })) },
    shaped.map((v) => ({ body: b64(serialize(v)), isBase64Encoded: true })),
    fc.integer({ min: 60_000, max: 80_000 }).map((n) => ({ body: JSON.stringify({ expression: 'x'.repeat(n) }), isBase64Encoded: false })),
  );

const digits = (n: number, max: number) => fc.integer({ min: 0, max }).map((v) => String(v).padStart(n, '0'));
const cronField = fc.oneof(
  fc.constantFrom(
    '*',
    '?',
    'L',
    'W',
    '1W',
    'L-2',
    '5L',
    '2#1',
    '6#5',
    '1-5',
    '*/15',
    '0/5',
    'MON-FRI',
    'JAN,MAR',
    'SUN',
    '2026',
    '1970-2199',
  ),
  fc.integer({ min: -5, max: 70 }).map(String),
  text,
);
const expression = fc.oneof(
  fc.constantFrom(
    'cron(0 9 * * ? *)',
    'cron(0/15 * * * ? *)',
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(2 hours)',
    'rate(1 day)',
    'at(2099-01-01T00:00:00)',
  ),
  fc.array(cronField, { minLength: 4, maxLength: 8 }).map((f) => `cron(${f.join(' ')})`),
  fc
    .tuple(
      fc.integer({ min: -2, max: 100_000 }),
      fc.constantFrom('minute', 'minutes', 'hour', 'hours', 'day', 'days', 'second', 'week', ''),
    )
    .map(([n, u]) => `rate(${n} ${u})`),
  fc
    .tuple(digits(4, 9999), digits(2, 13), digits(2, 32), digits(2, 25), digits(2, 61), digits(2, 61))
    .map(([y, mo, d, h, mi, s]) => `at(${y}-${mo}-${d}T${h}:${mi}:${s})`),
  text,
  text.map((s) => `cron(${s})`),
  text.map((s) => `rate(${s})`),
  text.map((s) => `at(${s})`),
);
const timezone = fc.oneof(
  fc.constantFrom(
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Asia/Kolkata',
    'Australia/Lord_Howe',
    'Etc/GMT+12',
    'utc',
    'Mars/Olympus',
    '',
    '+01:00',
  ),
  text,
);
const instant = fc.oneof(
  fc.date({ min: new Date('1900-01-01'), max: new Date('2300-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2030-01-01T00:00:00+14:00', '2030-01-01T00:00:00-12:00', '2030-01-01T00:00:00', '2030-02-30T00:00:00Z', ''),
  text,
  fc.constant(null),
);
const variables = fc.oneof(
  fc.record({ count: fc.jsonValue(), who: fc.jsonValue(), flags: fc.jsonValue() }, { requiredKeys: [] }),
  fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
  fc.jsonValue(),
);
const settings = {
  name: fc.oneof(text, fc.string({ minLength: 190, maxLength: 210 }), fc.jsonValue()),
  expression: fc.oneof({ weight: 5, arbitrary: expression }, fc.jsonValue()),
  timezone: fc.oneof({ weight: 5, arbitrary: timezone }, fc.jsonValue()),
  variables,
  enabled: fc.oneof(fc.boolean(), fc.jsonValue()),
  overlap: fc.oneof(fc.constantFrom('skip', 'allow', 'queue', ''), fc.jsonValue()),
  startAt: instant,
  endAt: instant,
};
const shaped = fc.oneof(
  fc.record(settings, { requiredKeys: ['expression'] }),
  fc.record(settings, { requiredKeys: [] }),
  fc.record({ ...settings, extra: fc.jsonValue() }, { requiredKeys: [] }),
);

describe('the schedule routes never answer 5xx', () => {
  let account: Awaited<ReturnType<typeof givenAccount>>;
  let other: Awaited<ReturnType<typeof givenAccount>>;
  let adminSession: string;
  let memberSession: string;
  let workflowId: string;
  let otherWorkflowId: string;
  let scheduleIds: string[];
  let otherScheduleId: string;
  let eventsCursor: string;
  const principal = (a: typeof account) =>
    ({ kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: 'test' }) as const;

  beforeAll(async () => {
    await useOwnTable();
    await useOwnQueues();
    ({ account, other, adminSession, memberSession } = await givenPropertyAccounts({}));
    const wf = (owner: { accountId: string; userId: string; role: 'admin' }) =>
      createWorkflow(owner, { name: `wf-${randomBytes(3).toString('hex')}`, definition: DEFINITION, recovery: false, editors: [] });
    const [mine, theirs] = await Promise.all([wf({ ...account.admin, role: 'admin' }), wf({ ...other.admin, role: 'admin' })]);
    workflowId = mine.workflowId;
    otherWorkflowId = theirs.workflowId;
    const body = { expression: 'at(2099-01-01T00:00:00)', timezone: 'UTC', variables: {}, enabled: true, overlap: 'skip' } as const;
    scheduleIds = await Promise.all(
      Array.from({ length: 3 }, (_, i) => createSchedule(principal(account), workflowId, { ...body, overlap: i === 0 ? 'allow' : 'skip' })),
    ).then((xs) => xs.map((s) => s.scheduleId));
    otherScheduleId = (await createSchedule(principal(other), otherWorkflowId, body)).scheduleId;
    // Two fires of the `allow` schedule: its log holds two events, and a cursor after the first.
    for (const at of [Date.now(), Date.now() + 1])
      await fireSchedule(
        {
          accountId: account.account.accountId,
          scheduleId: scheduleIds[0] as string,
          scheduledAt: at,
          manual: { userId: account.admin.userId },
        },
        at,
      );
    eventsCursor = (await pageScheduleEvents(principal(account), scheduleIds[0] as string, 1, undefined)).nextCursor as string;
    expect(eventsCursor).toEqual(expect.any(String));
  });

  const sessionAuth = () =>
    fc.option(
      fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(`Bearer ${adminSession}`, `Bearer ${memberSession}`) },
        text,
        tokenBody.map((t) => `Bearer dys_${t}`),
        mutated(adminSession).map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer', '', `Bearer ${account.adminKey.token}`),
      ),
      { nil: undefined, freq: 8 },
    );
  const workflowParams = () =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constant({ id: workflowId }) },
      fc.constant({ id: otherWorkflowId }),
      ulidish.map((u) => ({ id: `wf_${u}` })),
      text.map((id) => ({ id })),
    );
  const scheduleParams = () =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...scheduleIds).map((scheduleId) => ({ scheduleId })) },
      fc.constant({ scheduleId: otherScheduleId }),
      ulidish.map((u) => ({ scheduleId: `sch_${u}` })),
      text.map((scheduleId) => ({ scheduleId })),
    );
  const checkView = (res: { status: number; json: any }) => {
    if (res.status < 300 && res.json !== undefined && 'expression' in res.json) expect(ScheduleView.parse(res.json)).toEqual(res.json);
  };

  it('POST /api/workflows/{id}/schedules', async () => {
    let created = 0;
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { params: workflowParams() }), async (req) => {
        const res = await check(createHandler, 'POST', '/api/workflows/{id}/schedules', req, [201, 400, 401, 403, 404, 413, 415]);
        checkView(res);
        if (res.status === 201) created++;
      }),
      runsWith(
        RUNS,
        good(`Bearer ${adminSession}`, { json: { expression: 'rate(5 minutes)', variables: { who: 'x' } }, params: { id: workflowId } }),
      ),
    );
    expect(created).toBeGreaterThan(0);
  });

  it('PUT /api/schedules/{scheduleId}', async () => {
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { params: scheduleParams() }), async (req) => {
        const res = await check(updateHandler, 'PUT', '/api/schedules/{scheduleId}', req, [200, 400, 401, 403, 404, 413, 415]);
        checkView(res);
      }),
      runsWith(
        RUNS,
        // A rate (anchored now), then edits that keep its anchor (a rename, variables, re-enabling) and one that moves it.
        good(`Bearer ${adminSession}`, {
          json: { expression: 'rate(5 minutes)', startAt: null },
          params: { scheduleId: scheduleIds[1] as string },
        }),
        good(`Bearer ${adminSession}`, { json: { name: 'renamed' }, params: { scheduleId: scheduleIds[1] as string } }),
        good(`Bearer ${adminSession}`, { json: { enabled: false }, params: { scheduleId: scheduleIds[1] as string } }),
        good(`Bearer ${adminSession}`, {
          json: { enabled: true, variables: { who: 'y' } },
          params: { scheduleId: scheduleIds[1] as string },
        }),
        good(`Bearer ${adminSession}`, { json: { expression: 'rate(1 minute)' }, params: { scheduleId: scheduleIds[1] as string } }),
      ),
    );
  });

  it('GET /api/workflows/{id}/schedules, GET /api/schedules/{scheduleId}', async () => {
    await fc.assert(
      fc.asyncProperty(
        request(sessionAuth(), fc.constant<Body>({ isBase64Encoded: false }), { params: workflowParams() }),
        request(sessionAuth(), fc.constant<Body>({ isBase64Encoded: false }), { params: scheduleParams() }),
        async (list, get) => {
          const listed = await check(listHandler, 'GET', `/api/workflows/${list.params?.id}/schedules`, list, [200, 401, 404]);
          if (listed.status === 200) for (const item of listed.json.items) expect(ScheduleView.parse(item)).toEqual(item);
          checkView(await check(getHandler, 'GET', `/api/schedules/${get.params?.scheduleId}`, get, [200, 401, 404]));
        },
      ),
      RUNS,
    );
  });

  it('GET /api/schedules/{scheduleId}/events', async () => {
    const query = () =>
      fc.option(
        fc.record(
          {
            limit: fc.oneof(fc.integer({ min: -5, max: 300 }).map(String), text),
            cursor: fc.oneof(fc.constant(eventsCursor), mutated(eventsCursor), fc.base64String({ maxLength: 100 }), text),
          },
          { requiredKeys: [] },
        ),
        { nil: undefined },
      );
    let listed = 0;
    await fc.assert(
      fc.asyncProperty(
        request(sessionAuth(), fc.constant<Body>({ isBase64Encoded: false }), { params: scheduleParams(), query: query() }),
        async (req) => {
          const res = await check(eventsHandler, 'GET', '/api/schedules/{scheduleId}/events', req, [200, 400, 401, 404]);
          if (res.status !== 200) return;
          listed++;
          // Only the account's own schedules answer; their events come by seq.
          expect(scheduleIds).toContain(req.params?.scheduleId);
          const seqs: number[] = res.json.items.map((e: { seq: number }) => e.seq);
          for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
        },
      ),
      runsWith(RUNS, good(`Bearer ${adminSession}`, { params: { scheduleId: scheduleIds[0] as string }, query: { cursor: eventsCursor } })),
    );
    expect(listed).toBeGreaterThan(0);
  });

  it('POST /api/schedules/{scheduleId}/run', async () => {
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { params: scheduleParams() }), async (req) => {
        await check(runHandler, 'POST', '/api/schedules/{scheduleId}/run', req, [202, 400, 401, 403, 404, 409, 413, 415]);
      }),
      { numRuns: 40 },
    );
  });

  it('POST /api/schedules/{scheduleId}/run, many at once: 202 or 409, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...scheduleIds), fc.integer({ min: 2, max: 12 }), async (scheduleId, n) => {
        const req = good(`Bearer ${adminSession}`, { params: { scheduleId } });
        await Promise.all(
          Array.from({ length: n }, () => check(runHandler, 'POST', `/api/schedules/${scheduleId}/run`, req, [202, 400, 404, 409])),
        );
      }),
      { numRuns: 8 },
    );
    // Every outcome of every fire so far is in its schedule's log once, each with a seq of its own.
    for (const scheduleId of scheduleIds) {
      const events: { type: string; seq: number }[] = [];
      let cursor: string | undefined;
      do {
        const page = await pageScheduleEvents(principal(account), scheduleId, 100, cursor);
        events.push(...page.items.map((e) => ({ type: e.type, seq: e.seq as number })));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const s = await getSchedule(account.account.accountId, scheduleId, true);
      const count = (type: string) => events.filter((e) => e.type === type).length;
      expect([count('schedule.fired'), count('schedule.skipped'), count('schedule.failed')]).toEqual([s?.fires, s?.skips, s?.failures]);
      for (let i = 1; i < events.length; i++) expect(events[i]?.seq).toBeGreaterThan(events[i - 1]?.seq as number);
    }
  });

  it('DELETE /api/schedules/{scheduleId}', async () => {
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped), { params: scheduleParams() }), async (req) => {
        await check(deleteHandler, 'DELETE', '/api/schedules/{scheduleId}', req, [204, 400, 401, 403, 404, 413, 415]);
      }),
      { numRuns: 40 },
    );
  });
});
