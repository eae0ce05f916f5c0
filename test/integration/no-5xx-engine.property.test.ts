import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as downloadHandler } from '../../functions/http/v1/artifacts/download.ts';
import { handler as cancelHandler } from '../../functions/http/v1/executions/cancel.ts';
import { handler as rerunHandler } from '../../functions/http/v1/executions/rerun.ts';
import { handler as resumeHandler } from '../../functions/http/v1/executions/resume.ts';
import { handler as retryHandler } from '../../functions/http/v1/executions/retry.ts';
import { handler as eventsHandler } from '../../functions/http/v1/executions/events.ts';
import { handler as executionDeliveriesHandler } from '../../functions/http/v1/executions/deliveries.ts';
import { handler as approvalDeliveriesHandler } from '../../functions/http/v1/approvals/deliveries.ts';
import { handler as redeliverHandler } from '../../functions/http/deliveries/redeliver.ts';
import { handler as listExecutionsHandler } from '../../functions/http/v1/executions/list.ts';
import { handler as startRunHandler } from '../../functions/http/v1/workflows/start-run.ts';
import { handler as createWorkflowHandler } from '../../functions/http/workflows/create.ts';
import { handler as updateWorkflowHandler } from '../../functions/http/workflows/update.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { listArtifacts } from '../../shared/db/entities/artifact.ts';
import { pageEvents, pageExecutions } from '../../shared/domain/executions.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { useOwnQueues } from '../support/engine.ts';
import type { givenAccount } from '../support/fixtures.ts';
import { givenPropertyAccounts } from '../support/sessions.ts';
import {
  anyQuery,
  anyUnits,
  b64,
  b64url,
  type Body,
  check,
  good,
  mutated,
  printable,
  type Request,
  request,
  runsWith,
  serialize,
  text,
  tokenBody,
  ulidish,
  deeplyNested,
} from '../support/properties.ts';

import { exampleDefinition } from '../support/definitions.ts';
import { handler as reportHandler } from '../../functions/http/v1/callbacks/report.ts';
import { handler as heartbeatHandler } from '../../functions/http/v1/callbacks/heartbeat.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../../shared/clients.ts';
import { buildUpdate } from '../../shared/db/update.ts';
import { callbackKey } from '../../shared/db/entities/callback.ts';
import { RETRY_ON } from '../../shared/engine/steps/retry-policy.ts';
import { hashToken, mintToken } from '../../shared/tokens.ts';

/**
 * Whatever a client sends, the workflow and run handlers answer with a 2xx/3xx or a 4xx problem
 * document, never a 5xx. Same contract and pattern as no-5xx.property.test.ts, for the engine's routes.
 * Runs against the real emulators, through the whole middleware stack.
 */

/** Ids of every shape: real ones (given), prefixed ULIDs, bare ULIDs, junk. */
const idLike = (real: readonly string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...real) },
    fc.tuple(fc.constantFrom('wf', 'ex', 'ar', 'wh', 'ap', 'usr'), ulidish).map(([p, u]) => `${p}_${u}`),
    ulidish,
    text,
    fc.constantFrom(...real).chain(mutated),
    fc.constantFrom('', ' ', '%', '..', '../x', 'EX#x', 'ex_', `ex_${'z'.repeat(26)}/..`),
  );

/** JSON values that stress a store: deep nesting, long strings, extreme numbers, odd keys. */
const deepValue = fc.tuple(fc.integer({ min: 1, max: 70 }), fc.jsonValue({ maxDepth: 1 }), fc.boolean()).map(([depth, leaf, arrays]) => {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { d: v };
  return v;
});
const storeValue = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue() },
  deepValue,
  { weight: 2, arbitrary: fc.constantFrom(1e16, -1e16, 2 ** 53, 1.7976931348623157e308, 5e-324, -0, 0.1 + 0.2, 1e-130, 9.99e125) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      { '': 1 },
      { constructor: 1 },
      { constructor: { name: 'Map' } },
      { __proto__: null, toString: 'x' },
      { valueOf: {} },
    ),
  },
  fc.dictionary(fc.constantFrom('', 'constructor', '__proto__', 'toString', 'a.b', '#', ':x', 'x'), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 3,
  }),
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 300 }).map((k) => 'x'.repeat(k * 1024)) },
);

/** Bodies: JSON, text, anything serialized, raw bytes as base64, route-shaped objects (plain or base64), oversized. */
const bodies = (shaped: fc.Arbitrary<unknown>, oversized: { min: number; max: number }): fc.Arbitrary<Body> =>
  fc.oneof(
    fc.constant<Body>({ isBase64Encoded: false }),
    fc.json().map((body) => ({ body, isBase64Encoded: false })),
    { weight: 2, arbitrary: deeplyNested.map((body) => ({ body, isBase64Encoded: false })) },
    text.map((body) => ({ body, isBase64Encoded: false })),
    fc.anything().map((v) => ({ body: serialize(v), isBase64Encoded: false })),
    fc.uint8Array({ maxLength: 600 }).map((u) => ({ body: b64(u), isBase64Encoded: true })),
    text.map((s) => ({ body: s, isBase64Encoded: true })),
    { weight: 10, arbitrary: shaped.map((v) => ({ body: serialize(v), isBase64Encoded: false })) },
    { weight: 2, arbitrary: shaped.map((v) => ({ body: b64(serialize(v)), isBase64Encoded: true })) },
    fc.integer(oversized).map((n) => ({ body: JSON.stringify({ name: 'x'.repeat(n), definition: {} }), isBase64Encoded: false })),
  );

const RUNS = { numRuns: 100 } as const;
const INTERNAL = ['definition', 'lease', 'dispatch', 'input', 'outputs', 'accountId'];
const STEP_TYPES = [
  'set',
  'http_request',
  'manual_approval',
  'artifact',
  'delay',
  'fail',
  'wait_for_callback',
  'switch',
  'for_each',
] as const;

/** A full example definition (the format: docs/workflows.md), with object and array variables too: valid as is. */
const example = (): any => {
  const d = exampleDefinition();
  d.variables = { ...d.variables, meta: { type: 'object' }, tags: { type: 'array' } };
  return d;
};

type Mutation = (d: any) => void;
const step = (d: any, i: number) => (Array.isArray(d?.steps) && d.steps[i] && typeof d.steps[i] === 'object' ? d.steps[i] : {});

/** Places of the example where an expression `{% ... %}` may stand. */
const expressionSlots: ((d: any, v: string) => void)[] = [
  (d, v) => {
    step(d, 0).values = { ...step(d, 0).values, summary: v };
  },
  (d, v) => {
    step(d, 1).title = v;
  },
  (d, v) => {
    const form = step(d, 1).form;
    if (Array.isArray(form) && form[1]) form[1].default = v;
  },
  (d, v) => {
    step(d, 2).body = v;
  },
  (d, v) => {
    step(d, 2).url = v;
  },
  (d, v) => {
    step(d, 3).content = v;
  },
  (d, v) => {
    step(d, 5).when = v;
  },
  (d, v) => {
    step(d, 4).when = v;
  },
  (d, v) => {
    d.output = v;
  },
  (d, v) => {
    d.output = { nested: [1, { deeper: v }] };
  },
];
/** Places of the example where literal JSON may stand. */
const literalSlots: ((d: any, v: unknown) => void)[] = [
  (d, v) => {
    step(d, 0).values = { ...step(d, 0).values, extra: v };
  },
  (d, v) => {
    step(d, 2).body = v;
  },
  (d, v) => {
    step(d, 3).content = v;
  },
  (d, v) => {
    d.output = v;
  },
  (d, v) => {
    if (d.variables?.meta) d.variables.meta.default = v;
  },
];
const STEP_KEYS = [
  'id',
  'type',
  'title',
  'when',
  'values',
  'url',
  'method',
  'reviewers',
  'minApprovals',
  'form',
  'seconds',
  'message',
  'name',
  'content',
  'retry',
  'timeoutSeconds',
  'heartbeatSeconds',
  'onTimeout',
  'request',
  'next',
  'onError',
  'cases',
  'default',
  'items',
  'steps',
  'maxItems',
];

/** Step ids a control-flow target may name: the example's, "$end", made-up and malformed ones. */
const targetArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('prepare', 'approve', 'notify', 'report', 'cool-down', 'too-big', '$end') },
  fc.constantFrom('nope', '', '$END', 'end', 'a b', 'x'.repeat(65)),
  text,
);
const whenArb = fc.oneof(fc.boolean(), fc.constantFrom('{% $vars.amount > 1 %}', '{% $trigger.event = "push" %}', '{% [ %}'), text);
const switchArb = fc.record(
  {
    id: fc.oneof(fc.constantFrom('route', 'prepare'), text),
    type: fc.constant('switch'),
    cases: fc.oneof(fc.array(fc.record({ when: whenArb, next: targetArb }), { maxLength: 4 }), fc.jsonValue()),
    default: targetArb,
    next: targetArb,
  },
  { requiredKeys: ['id', 'type', 'cases'] },
);
const nestedArb = fc.oneof(
  fc.constant(null).map(() => example().steps[0]),
  fc.constant(null).map(() => ({ ...example().steps[2], id: 'inner-call' })),
  fc.constant(null).map(() => ({ ...example().steps[1], id: 'inner-approve', title: "{% 'Item ' & $string($index) %}" })),
  fc.constant({ id: 'inner', type: 'for_each', items: '{% [1] %}', steps: [{ id: 'deep', type: 'set', values: {} }] }),
  // A retried request and a callback wait, once per item.
  fc.constant(null).map(() => ({ ...example().steps[2], id: 'inner-retried', retry: { maxAttempts: 2, intervalSeconds: 1 } })),
  fc.constant({
    id: 'inner-wait',
    type: 'wait_for_callback',
    timeoutSeconds: 60,
    request: { method: 'POST', url: '{% $callback.url %}', body: "{% { 'item': $item, 'token': $callback.token } %}" },
  }),
  switchArb,
  fc.jsonValue(),
);
const forEachArb = fc.record(
  {
    id: fc.oneof(fc.constantFrom('each', 'notify'), text),
    type: fc.constant('for_each'),
    items: fc.oneof(fc.constantFrom('{% [1..3] %}', '{% $vars.tags %}', '{% $item %}', '[1, 2]', '{% [1, %}'), fc.jsonValue()),
    steps: fc.oneof(fc.array(nestedArb, { maxLength: 3 }), fc.jsonValue()),
    maxItems: fc.oneof(fc.integer({ min: -1, max: 1002 }), fc.double(), text),
    onError: fc.oneof(fc.constantFrom('fail', 'continue', 'retry'), fc.record({ next: targetArb }), fc.jsonValue()),
  },
  { requiredKeys: ['id', 'type', 'items', 'steps'] },
);
/** Control flow anywhere: a switch or for_each step inserted, next/onError on a step, a step limit. */
const flowMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(6), fc.oneof(switchArb, forEachArb)).map(
    ([i, s]): Mutation =>
      (d) => {
        if (Array.isArray(d.steps)) d.steps.splice(i, 0, s);
      },
  ),
  fc.tuple(fc.nat(6), fc.constantFrom('next', 'onError'), fc.oneof(targetArb, fc.record({ next: targetArb }), fc.jsonValue())).map(
    ([i, k, v]): Mutation =>
      (d) => {
        step(d, i)[k] = v;
      },
  ),
  fc.oneof(fc.integer({ min: -1, max: 10_002 }), fc.double(), text, fc.jsonValue()).map(
    (v): Mutation =>
      (d) => {
        d.maxStepExecutions = v;
      },
  ),
);
const expressionText = fc
  .oneof(
    fc.string(),
    anyUnits(),
    fc.constantFrom(
      '',
      '%}',
      '{%',
      '$vars.',
      '(',
      '$f := function($n){ $f($n) }; $f(0)',
      '[1..100000000]',
      "$pad('', 1e9)",
      '$eval("1+")',
      '**',
      '/[/',
      '"unterminated',
      '$vars.a ~> $sum()',
      '$string($)',
      '{ "a": }',
      '$$$',
      '\\u0000',
    ),
  )
  .map((s) => `{% ${s} %}`);

/** A retry policy (`retry` on http_request and artifact): valid, at its bounds, or junk. */
const retryValue = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        maxAttempts: fc.oneof(fc.integer({ min: -1, max: 12 }), fc.double(), text),
        intervalSeconds: fc.oneof(fc.integer({ min: 0, max: 3602 }), fc.double()),
        backoffRate: fc.oneof(fc.double({ min: 0, max: 12, noNaN: true }), fc.integer({ min: -5, max: 20 })),
        maxDelaySeconds: fc.oneof(fc.integer({ min: 0, max: 86_402 }), fc.constant(null)),
        jitter: fc.oneof(fc.constantFrom('full', 'none', 'half'), text),
        on: fc.oneof(fc.array(fc.constantFrom(...RETRY_ON, 'HTTP_500', ''), { maxLength: 8 }), fc.jsonValue()),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    ),
  },
  fc.jsonValue(),
);
/** A wait_for_callback's fields: valid, at their bounds, or junk; its request like an http_request's. */
const waitValue = fc.record(
  {
    timeoutSeconds: fc.oneof(fc.integer({ min: -1, max: 31_536_002 }), fc.double(), text),
    heartbeatSeconds: fc.oneof(fc.integer({ min: -1, max: 31_536_002 }), text),
    onTimeout: fc.oneof(fc.constantFrom('fail', 'continue', 'approve'), text),
    request: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record(
          {
            url: fc.oneof(
              fc.constantFrom('https://ci.example.com/jobs', '{% $callback.url %}', 'http://127.0.0.1:1/x', 'ftp://x', ''),
              expressionText,
              text,
            ),
            method: fc.oneof(fc.constantFrom('GET', 'POST', 'HEAD', 'TRACE'), text),
            headers: fc.dictionary(fc.oneof(fc.constantFrom('authorization', 'x-token'), text), fc.oneof(text, expressionText), {
              maxKeys: 2,
            }),
            body: fc.oneof(storeValue, expressionText, fc.constant("{% { 'token': $callback.token, 'url': $callback.url } %}")),
            timeoutMs: fc.oneof(fc.integer({ min: 0, max: 30_001 }), text),
            saveAs: fc.constant('x'),
          },
          { requiredKeys: ['url'] },
        ),
      },
      fc.jsonValue(),
    ),
  },
  { requiredKeys: ['timeoutSeconds'] },
);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.constantFrom(2, 3, 0), retryValue).map(
    ([i, retry]): Mutation =>
      (d) => {
        step(d, i).retry = retry;
      },
  ),
  {
    weight: 2,
    arbitrary: fc.tuple(fc.nat(6), waitValue).map(
      ([i, wait]): Mutation =>
        (d) => {
          if (Array.isArray(d.steps)) d.steps[i] = { id: `wait${i}`, type: 'wait_for_callback', ...wait };
        },
    ),
  },
  { weight: 3, arbitrary: flowMutation },
  fc.tuple(fc.nat(6), fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...STEP_TYPES) }, text)).map(
    ([i, type]): Mutation =>
      (d) => {
        step(d, i).type = type;
      },
  ),
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom(...expressionSlots), expressionText).map(
      ([slot, v]): Mutation =>
        (d) =>
          slot(d, v),
    ),
  },
  {
    weight: 6,
    arbitrary: fc.tuple(fc.constantFrom(...literalSlots), storeValue).map(
      ([slot, v]): Mutation =>
        (d) =>
          slot(d, v),
    ),
  },
  fc.tuple(fc.nat(6), fc.oneof(fc.constantFrom(...STEP_KEYS), fc.string()), fc.jsonValue()).map(
    ([i, k, v]): Mutation =>
      (d) => {
        step(d, i)[k] = v;
      },
  ),
  fc.tuple(fc.nat(6), fc.constantFrom(...STEP_KEYS)).map(
    ([i, k]): Mutation =>
      (d) => {
        delete step(d, i)[k];
      },
  ),
  fc.tuple(fc.constantFrom('variables', 'steps', 'output', 'notifications', 'extra'), fc.jsonValue()).map(
    ([k, v]): Mutation =>
      (d) => {
        d[k] = v;
      },
  ),
  fc.tuple(fc.oneof(fc.string(), fc.constantFrom('', 'constructor', '__proto__', 'a b')), storeValue).map(
    ([name, value]): Mutation =>
      (d) => {
        d.variables = { ...d.variables, [name]: { type: 'object', default: value } };
      },
  ),
  fc.integer({ min: 0, max: 130 }).map(
    (n): Mutation =>
      (d) => {
        const base = Array.isArray(d.steps) && d.steps.length ? d.steps : example().steps;
        d.steps = Array.from({ length: n }, (_, i) => ({ ...base[i % base.length], id: `s${i}` }));
      },
  ),
  fc.nat(6).map(
    (i): Mutation =>
      (d) => {
        step(d, i).id = step(d, 0).id;
      },
  ),
  fc
    .tuple(fc.nat(6), fc.array(fc.oneof(fc.constantFrom('role:admin', 'role:member', 'role:owner', 'user:usr_x'), text), { maxLength: 3 }))
    .map(
      ([i, reviewers]): Mutation =>
        (d) => {
          step(d, i).reviewers = reviewers;
        },
    ),
  // A quorum: any number, against the account's users (one admin, one member here).
  fc.tuple(fc.nat(6), fc.oneof(fc.integer({ min: -1, max: 4 }), fc.double(), text)).map(
    ([i, minApprovals]): Mutation =>
      (d) => {
        step(d, i).minApprovals = minApprovals;
      },
  ),
  // Reminders and escalation: bounds, reviewers, channels (the account has none), a deadline, anything.
  fc
    .tuple(
      fc.nat(6),
      fc.oneof(
        fc.record(
          {
            everySeconds: fc.oneof(fc.integer({ min: -1, max: 700_000 }), fc.double(), text),
            max: fc.oneof(fc.integer({ min: -1, max: 25 }), text),
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue(),
      ),
      fc.oneof(
        fc.record(
          {
            afterSeconds: fc.oneof(fc.integer({ min: -1, max: 4_000_000 }), fc.double(), text),
            reviewers: fc.array(fc.oneof(fc.constantFrom('role:admin', 'role:member', 'user:usr_x'), text), { maxLength: 3 }),
            notify: fc.array(
              fc.record({ channel: fc.oneof(fc.constantFrom('mail', 'ops'), text), to: fc.jsonValue() }, { requiredKeys: ['channel'] }),
              {
                maxLength: 2,
              },
            ),
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue(),
      ),
      fc.oneof(fc.integer({ min: 0, max: 7200 }), fc.constant(undefined)),
    )
    .map(
      ([i, remind, escalate, timeoutSeconds]): Mutation =>
        (d) => {
          Object.assign(step(d, i), { remind, escalate, ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }) });
        },
    ),
);

/** The example with up to three mutations applied (a mutation that does not fit the shape is skipped). */
const mutatedDefinition = fc.array(mutation, { maxLength: 3 }).map((ms) => {
  const d = example();
  for (const m of ms) {
    try {
      m(d);
    } catch {
      // the shape no longer allows this mutation
    }
  }
  return d;
});

/** Mostly `good`, sometimes anything: keeps enough requests valid to reach the store. */
const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 6, arbitrary: good as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: bad });

const definitions = fc.oneof(
  { weight: 10, arbitrary: mutatedDefinition },
  { weight: 3, arbitrary: fc.constant(null).map(() => example()) },
  fc.jsonValue(),
  fc.json().map((s) => JSON.parse(s) as unknown),
  fc.constant(example()),
  fc.record({ steps: fc.array(fc.jsonValue(), { maxLength: 4 }) }),
);

describe('no request makes an engine handler answer 5xx', () => {
  let account: Awaited<ReturnType<typeof givenAccount>>;
  let other: Awaited<ReturnType<typeof givenAccount>>;
  let adminSession: string;
  let memberSession: string;
  let readOnlyToken: string;
  let executeOnlyToken: string;
  /** Workflows the PUT property may change. */
  let editable: string[];
  /** Workflows the run property starts (never changed). */
  let runnable: string[];
  let otherWorkflow: string;
  /** Executions of the account (PENDING, cancelled, finished) and the other account's. */
  let executions: string[];
  let cancellable: string[];
  let otherExecution: string;
  let artifact: { executionId: string; artifactId: string };
  let otherArtifact: { executionId: string; artifactId: string };
  let executionsCursor: string;
  let filteredCursor: string;
  let eventsCursor: string;

  beforeAll(async () => {
    // Shrinking a failure sends hundreds of requests: a high budget keeps one property's shrinking from
    // starving the next one into 429s.
    await useOwnQueues({ RATE_LIMITS: JSON.stringify({ team: 1_000_000 }) });
    const given = await givenPropertyAccounts({
      readOnly: { user: 'member', scopes: ['WORKFLOW_READ'] },
      executeOnly: { user: 'member', scopes: ['WORKFLOW_EXECUTE'] },
    });
    ({ account, other, adminSession, memberSession } = given);
    readOnlyToken = given.keys.readOnly.token;
    executeOnlyToken = given.keys.executeOnly.token;

    const admin = { accountId: account.account.accountId, userId: account.admin.userId, role: 'admin' as const };
    const member = { accountId: account.account.accountId, userId: account.member.userId, role: 'member' as const };
    const make = (owner: typeof admin | typeof member, definition: unknown) =>
      createWorkflow(owner, { name: 'prop', definition: WorkflowDefinition.parse(definition), recovery: false, editors: [] });
    const simple = { steps: [{ id: 'only', type: 'set', values: { y: 1 } }] };
    const withArtifact = {
      steps: [{ id: 'report', type: 'artifact', name: 'r.txt', content: 'hello' }],
    };
    const [e1, e2, e3, r1, r2, art] = await Promise.all([
      make(admin, example()),
      make(member, simple),
      make(admin, simple),
      make(admin, example()),
      make(member, simple),
      make(admin, withArtifact),
    ]);
    editable = [e1.workflowId, e2.workflowId, e3.workflowId];
    runnable = [r1.workflowId, r2.workflowId];
    const theirs = await createWorkflow(
      { accountId: other.account.accountId, userId: other.admin.userId, role: 'admin' },
      { name: 'theirs', definition: WorkflowDefinition.parse(withArtifact), recovery: false, editors: [] },
    );
    otherWorkflow = theirs.workflowId;

    const run = async (workflow: typeof r1, trigger: 'api' | 'webhook' | 'rerun' = 'api') =>
      (await startRun({ workflow, trigger, variables: {} })).execution;
    const finish = async (e: { accountId: string; executionId: string }) => {
      const stored = await getExecution(e.accountId, e.executionId);
      await processRunMessage(
        { accountId: e.accountId, executionId: e.executionId, dispatch: stored?.dispatch as string },
        { remainingMs: () => 30_000 },
      );
      const [a] = await listArtifacts(e.accountId, e.executionId);
      return a;
    };
    const pending = await Promise.all(
      Array.from({ length: 16 }, (_, i) => run(i % 2 ? r1 : r2, (['api', 'webhook', 'rerun'] as const)[i % 3])),
    );
    cancellable = pending.slice(4).map((e) => e.executionId);
    await cancelRun(account.account.accountId, pending[0]?.executionId as string, 'for the events cursor');
    const artifactRun = await run(art);
    const a = await finish(artifactRun);
    artifact = { executionId: artifactRun.executionId, artifactId: a?.artifactId as string };
    const theirRun = await run(theirs);
    const ta = await finish(theirRun);
    otherArtifact = { executionId: theirRun.executionId, artifactId: ta?.artifactId as string };
    otherExecution = (await run(theirs)).executionId;
    executions = [...pending.slice(0, 4).map((e) => e.executionId), artifactRun.executionId];
    expect(artifact.artifactId).toMatch(/^ar_/);
    expect(otherArtifact.artifactId).toMatch(/^ar_/);

    executionsCursor = (await pageExecutions(account.account.accountId, {}, 1, undefined)).nextCursor as string;
    filteredCursor = (await pageExecutions(account.account.accountId, { status: 'PENDING', trigger: 'api' }, 1, undefined))
      .nextCursor as string;
    eventsCursor = (await pageEvents(account.account.accountId, pending[0]?.executionId as string, 1, undefined)).nextCursor as string;
    expect([executionsCursor, filteredCursor, eventsCursor]).toEqual([expect.any(String), expect.any(String), expect.any(String)]);
  });

  /** A successful answer about `id` must come from the account that owns it. */
  const expectOwnerAsked = (req: Request, id: string | undefined, own: readonly string[], theirs: readonly string[]) => {
    const otherKey = req.headers.authorization === `Bearer ${other.adminKey.token}`;
    if (otherKey) expect(theirs, `${id} answered to the other account`).toContain(id);
    else expect(own, `${id} answered to this account`).toContain(id);
  };

  const sessionAuth = () =>
    fc.option(
      fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(`Bearer ${adminSession}`, `Bearer ${memberSession}`, `bearer   ${adminSession}`) },
        text,
        text.map((s) => `Bearer ${s}`),
        tokenBody.map((t) => `Bearer dys_${t}`),
        mutated(adminSession).map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer', '', `Bearer ${account.adminKey.token}`, `Bearer ${other.adminKey.token}`),
      ),
      { nil: undefined, freq: 10 },
    );

  const keyAuth = () =>
    fc.option(
      fc.oneof(
        {
          weight: 14,
          arbitrary: fc.constantFrom(
            `Bearer ${account.adminKey.token}`,
            `Bearer ${account.memberKey.token}`,
            `Bearer ${account.adminKey.token}`,
            `Bearer ${readOnlyToken}`,
            `Bearer ${executeOnlyToken}`,
            `Bearer ${other.adminKey.token}`,
          ),
        },
        text,
        text.map((s) => `Bearer ${s}`),
        tokenBody.map((t) => `Bearer dyk_${t}`),
        mutated(account.adminKey.token).map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer', '', `Bearer ${adminSession}`),
      ),
      { nil: undefined, freq: 12 },
    );

  const editorsArb = () =>
    fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom([], [account.member.userId], [account.admin.userId, account.member.userId]) },
      fc.constant([other.member.userId]),
      fc.array(
        fc.oneof(
          ulidish.map((u) => `usr_${u}`),
          text,
          fc.constantFrom(account.admin.userId),
        ),
        { maxLength: 3 },
      ),
      fc.jsonValue(),
    );

  it('POST /api/workflows', async () => {
    const shaped = fc.record(
      {
        name: mostly(fc.oneof(fc.constantFrom('wf', ' spaced ', 'x'.repeat(200)), fc.string({ minLength: 1 })), text),
        description: mostly(fc.string({ maxLength: 100 }), fc.jsonValue()),
        definition: definitions,
        recovery: mostly(fc.boolean(), fc.jsonValue()),
        editors: editorsArb(),
        extra: fc.jsonValue(),
      },
      { requiredKeys: ['name', 'definition'] },
    );
    let created = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(shaped, { min: 256 * 1024, max: 300 * 1024 })), async (req) => {
        const res = await check(createWorkflowHandler, 'POST', '/api/workflows', req, [201, 400, 401, 413, 415]);
        if (res.status === 201) {
          created++;
          expect(res.json.id).toMatch(/^wf_[0-9a-z]{26}$/);
          expect(res.headers.location).toBe(`/api/workflows/${res.json.id}`);
          expect(res.json.version).toBe(1);
        }
        if (res.status === 400) refused++;
      }),
      runsWith(
        RUNS,
        good(`Bearer ${adminSession}`, { json: { name: 'wf', definition: example() } }),
        good(`Bearer ${adminSession}`, { json: { name: 'wf' } }),
      ),
    );
    expect(created).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });

  it('PUT /api/workflows/{id}', async () => {
    const patch = fc.record(
      {
        name: mostly(fc.constantFrom('renamed', 'again'), fc.oneof(fc.constantFrom('', ' '), text)),
        description: mostly(fc.string({ maxLength: 100 }), fc.jsonValue()),
        definition: definitions,
        recovery: mostly(fc.boolean(), fc.jsonValue()),
        editors: editorsArb(),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    const params = fc.option(fc.oneof({ weight: 6, arbitrary: idLike([...editable, otherWorkflow]).map((id) => ({ id })) }, anyQuery), {
      nil: undefined,
      freq: 10,
    });
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(patch, { min: 256 * 1024, max: 300 * 1024 }), { params }), async (req) => {
        const path = '/api/workflows/{id}';
        const res = await check(updateWorkflowHandler, 'PUT', path, req, [200, 400, 401, 403, 404, 413, 415]);
        if (res.status === 200) {
          ok++;
          expect(editable).toContain(req.params?.id);
          expect(res.json.version).toBeGreaterThan(1);
        }
        if (req.params?.id === otherWorkflow) expect([400, 401, 404, 413, 415]).toContain(res.status);
      }),
      runsWith(RUNS, good(`Bearer ${adminSession}`, { json: { name: 'renamed' }, params: { id: editable[0] as string } })),
    );
    expect(ok).toBeGreaterThan(0);
  });

  it('POST /api/v1/workflows/{workflowId}/runs', async () => {
    const variables = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.dictionary(
          fc.oneof(fc.constantFrom('env', 'amount', 'urgent', 'meta', 'tags', '', 'constructor', '__proto__'), fc.string()),
          fc.oneof(storeValue, fc.constantFrom('prod', 3, true, {}, [])),
          { maxKeys: 5 },
        ),
      },
      fc.jsonValue(),
      storeValue,
    );
    const shaped = fc.oneof(
      { weight: 4, arbitrary: fc.record({ variables }) },
      fc.record({ variables, extra: fc.jsonValue() }, { requiredKeys: [] }),
    );
    const idempotency = fc.option(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('k1', 'k2', 'order-42') },
        printable,
        text,
        fc.integer({ min: 240, max: 320 }).map((n) => 'k'.repeat(n)),
        fc.constantFrom('', ' ', 'has space', 'tab\tkey', 'ключ', '\u0000'),
      ),
      { nil: undefined, freq: 2 },
    );
    const params = fc.option(
      fc.oneof({ weight: 6, arbitrary: idLike([...runnable, otherWorkflow]).map((workflowId) => ({ workflowId })) }, anyQuery),
      { nil: undefined, freq: 10 },
    );
    let started = 0;
    await fc.assert(
      fc.asyncProperty(
        request(keyAuth(), bodies(shaped, { min: 512 * 1024, max: 560 * 1024 }), {
          params,
          extraHeaders: idempotency.map((k): Record<string, string> => (k === undefined ? {} : { 'idempotency-key': k })),
        }),
        async (req) => {
          const path = '/api/v1/workflows/{workflowId}/runs';
          const res = await check(startRunHandler, 'POST', path, req, [202, 400, 401, 403, 404, 409, 413, 415, 429]);
          if (res.status === 202) {
            started++;
            expectOwnerAsked(req, req.params?.workflowId, runnable, [otherWorkflow]);
            expect(res.json.executionId).toMatch(/^ex_[0-9a-z]{26}$/);
            expect(res.headers.location).toBe(`/api/v1/executions/${res.json.executionId}`);
            for (const field of INTERNAL) expect(res.json).not.toHaveProperty(field);
          }
        },
      ),
      runsWith(RUNS, good(`Bearer ${account.adminKey.token}`, { json: { variables: {} }, params: { workflowId: runnable[0] as string } })),
    );
    expect(started).toBeGreaterThan(0);
  });

  it('GET /api/v1/executions', async () => {
    const cursor = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(executionsCursor, filteredCursor, eventsCursor) },
      mutated(executionsCursor),
      fc.base64String({ maxLength: 200 }),
      fc.tuple(fc.base64String({ maxLength: 120 }), fc.base64String({ maxLength: 60 })).map(([p, m]) => `${p}.${m}`),
      fc.tuple(text, text).map(([p, m]) => `${p}.${m}`),
      fc.tuple(fc.jsonValue(), fc.uint8Array({ maxLength: 32 })).map(([k, mac]) => `${b64url(serialize({ k, b: 'x' }))}.${b64url(mac)}`),
      fc
        .tuple(fc.jsonValue(), fc.constantFrom(...executionsCursor.split('.').slice(1)))
        .map(([k, mac]) => `${b64url(serialize(k))}.${mac}`),
      fc.constantFrom('', '.', 'x.y', 'x.y.z', 'null.null', 'e30.e30', 'x'.repeat(5000)),
      text,
    );
    const query = fc.option(
      fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record(
            {
              limit: fc.oneof(
                fc.integer({ min: -5, max: 200 }).map(String),
                fc.constantFrom('1', '100', '1e1', '0x10', ' 5', '', '2.5', 'NaN'),
                text,
              ),
              status: fc.oneof(
                fc.constantFrom('PENDING', 'RUNNING', 'WAITING_APPROVAL', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'INTERRUPTED', 'pending'),
                text,
              ),
              trigger: fc.oneof(fc.constantFrom('api', 'webhook', 'rerun', 'API'), text),
              workflowId: idLike([...runnable, otherWorkflow]),
              cursor,
            },
            { requiredKeys: [] },
          ),
        },
        anyQuery,
      ),
      { nil: undefined, freq: 8 },
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(request(keyAuth(), bodies(fc.jsonValue(), { min: 64 * 1024, max: 70 * 1024 }), { query }), async (req) => {
        const res = await check(listExecutionsHandler, 'GET', '/api/v1/executions', req, [200, 400, 401, 403, 413, 429]);
        if (res.status === 200) {
          ok++;
          expect(res.json.items).toEqual(expect.any(Array));
          expect(res.json.nextCursor === null || typeof res.json.nextCursor === 'string').toBe(true);
          for (const item of res.json.items) for (const field of INTERNAL) expect(item).not.toHaveProperty(field);
        }
      }),
      runsWith(RUNS, good(`Bearer ${account.adminKey.token}`, { query: { limit: '5' } })),
    );
    expect(ok).toBeGreaterThan(0);
  });

  it('GET /api/v1/executions/{executionId}/events', async () => {
    const params = fc.option(
      fc.oneof({ weight: 6, arbitrary: idLike([...executions, otherExecution]).map((executionId) => ({ executionId })) }, anyQuery),
      { nil: undefined, freq: 10 },
    );
    const query = fc.option(
      fc.record(
        {
          limit: fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), text),
          cursor: fc.oneof(
            fc.constantFrom(eventsCursor, executionsCursor),
            mutated(eventsCursor),
            fc.tuple(fc.base64String({ maxLength: 100 }), fc.base64String({ maxLength: 60 })).map(([p, m]) => `${p}.${m}`),
            text,
          ),
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(request(keyAuth(), bodies(fc.jsonValue(), { min: 64 * 1024, max: 70 * 1024 }), { params, query }), async (req) => {
        const path = '/api/v1/executions/{executionId}/events';
        const res = await check(eventsHandler, 'GET', path, req, [200, 400, 401, 403, 404, 413, 429]);
        if (res.status === 200) {
          ok++;
          expectOwnerAsked(req, req.params?.executionId, executions, [otherExecution]);
          for (const e of res.json.items) expect(e.executionId).toBe(req.params?.executionId);
        }
      }),
      runsWith(RUNS, good(`Bearer ${account.adminKey.token}`, { params: { executionId: executions[0] as string } })),
    );
    expect(ok).toBeGreaterThan(0);
  });

  it('POST /api/v1/executions/{executionId}/cancel', async () => {
    const params = fc.option(
      fc.oneof(
        { weight: 6, arbitrary: idLike([...cancellable, ...executions, otherExecution]).map((executionId) => ({ executionId })) },
        anyQuery,
      ),
      { nil: undefined, freq: 10 },
    );
    const shaped = fc.record(
      {
        reason: fc.oneof(
          text,
          fc.integer({ min: 490, max: 510 }).map((n) => 'r'.repeat(n)),
          fc.jsonValue(),
        ),
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    let cancelled = 0;
    await fc.assert(
      fc.asyncProperty(request(keyAuth(), bodies(shaped, { min: 64 * 1024, max: 70 * 1024 }), { params }), async (req) => {
        const path = '/api/v1/executions/{executionId}/cancel';
        const res = await check(cancelHandler, 'POST', path, req, [200, 400, 401, 403, 404, 409, 413, 415, 429]);
        if (res.status === 200) {
          cancelled++;
          expectOwnerAsked(req, req.params?.executionId, [...cancellable, ...executions], [otherExecution]);
          expect(res.json.status).toBe('CANCELLED');
          for (const field of INTERNAL) expect(res.json).not.toHaveProperty(field);
        }
      }),
      runsWith(RUNS, good(`Bearer ${account.adminKey.token}`, { json: {}, params: { executionId: cancellable[0] as string } })),
    );
    expect(cancelled).toBeGreaterThan(0);
  });

  it('POST /api/v1/executions/{executionId}/resume, /rerun and /retry', async () => {
    const params = fc.option(
      fc.oneof({ weight: 6, arbitrary: idLike([...executions, otherExecution]).map((executionId) => ({ executionId })) }, anyQuery),
      { nil: undefined, freq: 10 },
    );
    const outcomes = new Set<string>();
    const actions = [
      ['resume', resumeHandler, [400, 401, 403, 404, 409, 413, 415, 429]],
      ['rerun', rerunHandler, [202, 400, 401, 403, 404, 409, 413, 415, 429]],
      ['retry', retryHandler, [202, 400, 401, 403, 404, 409, 413, 415, 429]],
    ] as const;
    for (const [action, handler, allowed] of actions) {
      await fc.assert(
        fc.asyncProperty(request(keyAuth(), bodies(fc.jsonValue(), { min: 64 * 1024, max: 70 * 1024 }), { params }), async (req) => {
          const path = `/api/v1/executions/{executionId}/${action}`;
          const res = await check(handler, 'POST', path, req, allowed);
          outcomes.add(`${action} ${res.status} ${res.json?.code ?? ''}`);
          if (res.status === 202) {
            expectOwnerAsked(req, req.params?.executionId, executions, [otherExecution]);
            if (action === 'rerun')
              expect(res.json).toMatchObject({ trigger: 'rerun', rerunOf: req.params?.executionId, status: 'PENDING' });
            else expect(res.json).toMatchObject({ executionId: req.params?.executionId, status: 'PENDING', retries: expect.any(Number) });
          }
        }),
        runsWith({ numRuns: 50 }, good(`Bearer ${account.adminKey.token}`, { params: { executionId: artifact.executionId } })),
      );
    }
    // Nothing here is INTERRUPTED, so resume is always refused; the finished run can be rerun.
    expect(outcomes).toContain('resume 409 EXECUTION_NOT_INTERRUPTED');
    expect(outcomes).toContain('rerun 202 ');
    expect([...outcomes].some((o) => o.startsWith('retry 409 '))).toBe(true);
  });

  it('GET /api/v1/executions/{executionId}/artifacts/{artifactId}/download', async () => {
    const params = fc.option(
      fc.oneof(
        { weight: 4, arbitrary: fc.constant({ ...artifact }) },
        fc.constant({ ...otherArtifact }),
        fc.constant({ executionId: artifact.artifactId, artifactId: artifact.executionId }),
        fc.constant({ executionId: otherArtifact.executionId, artifactId: artifact.artifactId }),
        {
          weight: 4,
          arbitrary: fc.record({
            executionId: idLike([artifact.executionId, otherArtifact.executionId, ...executions]),
            artifactId: idLike([artifact.artifactId, otherArtifact.artifactId]),
          }),
        },
        anyQuery,
      ),
      { nil: undefined, freq: 10 },
    );
    const query = fc.option(
      fc.oneof(
        { weight: 4, arbitrary: fc.record({ redirect: fc.oneof(fc.constantFrom('0', '1', '', 'true', '2', '01', ' 1', 'yes'), text) }) },
        anyQuery,
      ),
      { nil: undefined },
    );
    let links = 0;
    await fc.assert(
      fc.asyncProperty(request(keyAuth(), bodies(fc.jsonValue(), { min: 64 * 1024, max: 70 * 1024 }), { params, query }), async (req) => {
        const p = req.params ?? {};
        const path = '/api/v1/executions/{executionId}/artifacts/{artifactId}/download';
        const res = await check(downloadHandler, 'GET', path, req, [200, 302, 400, 401, 403, 404, 413, 429]);
        if (res.status === 200 || res.status === 302) {
          links++;
          const pair = `${p.executionId}/${p.artifactId}`;
          expectOwnerAsked(
            req,
            pair,
            [`${artifact.executionId}/${artifact.artifactId}`],
            [`${otherArtifact.executionId}/${otherArtifact.artifactId}`],
          );
          if (res.status === 302) expect(res.headers.location).toMatch(/^https?:\/\//);
          else expect(res.json).toEqual({ url: expect.stringMatching(/^https?:\/\//), expiresAt: expect.any(Number) });
        }
      }),
      runsWith(
        RUNS,
        good(`Bearer ${account.adminKey.token}`, { params: { ...artifact } }),
        // Found by a CI run: ids with `?` and `/` are sent percent-encoded, the route stays this one.
        good(`Bearer ${account.adminKey.token}`, { params: { executionId: ' ?', artifactId: `${artifact.artifactId}/x` } }),
      ),
    );
    expect(links).toBeGreaterThan(0);
  });

  // The delivery log (shared/domain/deliveries.ts): its listings take the events' parameters, the redelivery a delivery id.
  it('GET /api/v1/executions/{executionId}/deliveries, GET /api/v1/approvals/{approvalId}/deliveries', async () => {
    const params = fc.option(
      fc.oneof({ weight: 6, arbitrary: idLike([...executions, otherExecution]).map((executionId) => ({ executionId })) }, anyQuery),
      { nil: undefined, freq: 10 },
    );
    const query = fc.option(
      fc.record(
        {
          limit: fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), text),
          cursor: fc.oneof(fc.constantFrom(eventsCursor, executionsCursor), mutated(eventsCursor), text),
        },
        { requiredKeys: [] },
      ),
      { nil: undefined },
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(request(keyAuth(), bodies(fc.jsonValue(), { min: 64 * 1024, max: 70 * 1024 }), { params, query }), async (req) => {
        const id = req.params?.executionId ?? '';
        const res = await check(
          executionDeliveriesHandler,
          'GET',
          `/api/v1/executions/${id}/deliveries`,
          req,
          [200, 400, 401, 403, 404, 413, 429],
        );
        if (res.status === 200) {
          ok++;
          expectOwnerAsked(req, id, executions, [otherExecution]);
          for (const d of res.json.items) expect(d.executionId).toBe(id);
        }
        const asApproval = { ...req, params: req.params && { approvalId: id } };
        await check(
          approvalDeliveriesHandler,
          'GET',
          `/api/v1/approvals/${id}/deliveries`,
          asApproval,
          [200, 400, 401, 403, 404, 413, 429],
        );
      }),
      runsWith(RUNS, good(`Bearer ${account.adminKey.token}`, { params: { executionId: executions[0] as string } })),
    );
    expect(ok).toBeGreaterThan(0);
  });

  it('POST /api/deliveries/{deliveryId}/redeliver', async () => {
    const params = fc.option(
      fc.oneof(
        { weight: 6, arbitrary: idLike(['dl_00000000000000000000000000', ...executions]).map((deliveryId) => ({ deliveryId })) },
        anyQuery,
      ),
      { nil: undefined, freq: 10 },
    );
    await fc.assert(
      fc.asyncProperty(request(sessionAuth(), bodies(fc.jsonValue(), { min: 64 * 1024, max: 70 * 1024 }), { params }), async (req) => {
        const id = req.params?.deliveryId ?? '';
        const res = await check(redeliverHandler, 'POST', `/api/deliveries/${id}/redeliver`, req, [400, 401, 403, 404, 409, 413, 415, 429]);
        expect(res.status, res.body).not.toBe(202);
      }),
      runsWith(RUNS, good(`Bearer ${adminSession}`, { params: { deliveryId: 'dl_00000000000000000000000000' } })),
    );
  });

  it('POST /api/v1/callbacks/{callbackId} and /heartbeat', async () => {
    // Waiting runs of both accounts, each callback's token known (the run hands it only to its request).
    const waits = async (a: typeof account, n: number) => {
      const actor = { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' as const };
      const definition = WorkflowDefinition.parse({ steps: [{ id: 'w', type: 'wait_for_callback', timeoutSeconds: 3600 }] });
      const workflow = await createWorkflow(actor, { name: 'cb', definition, recovery: false, editors: [] });
      return Promise.all(
        Array.from({ length: n }, async () => {
          const { execution: e } = await startRun({ workflow, trigger: 'api', variables: {} });
          await processRunMessage(
            { accountId: e.accountId, executionId: e.executionId, dispatch: e.dispatch as string },
            { remainingMs: () => 30_000 },
          );
          const callbackId = (await getExecution(e.accountId, e.executionId))?.callbackId as string;
          const token = mintToken('dyc', a.account.accountId.slice(4));
          await db().send(
            new UpdateCommand(buildUpdate(callbackKey(a.account.accountId, callbackId), { tokenHash: hashToken(token) }, [])),
          );
          return { callbackId, token };
        }),
      );
    };
    const own = await waits(account, 6);
    const [theirs] = await waits(other, 1);
    const all = [...own, theirs as (typeof own)[number]];
    // The heartbeat's own callback (own[5]) is kept out of the reports' requests: a report that hit it
    // would end its wait, and no heartbeat could answer 200 after that.
    const requestsFor = (callbacks: typeof all) => ({
      params: fc.option(
        fc.oneof(
          { weight: 6, arbitrary: idLike(callbacks.map((c) => c.callbackId)).map((callbackId) => ({ callbackId })) },
          ulidish.map((u) => ({ callbackId: `cb_${u}` })),
          anyQuery,
        ),
        { nil: undefined, freq: 10 },
      ),
      auth: fc.option(
        fc.oneof(
          { weight: 10, arbitrary: fc.constantFrom(...callbacks.map((c) => `Bearer ${c.token}`)) },
          text,
          text.map((t) => `Bearer ${t}`),
          tokenBody.map((t) => `Bearer dyc_${t}`),
          fc
            .constantFrom(...callbacks.map((c) => c.token))
            .chain(mutated)
            .map((t) => `Bearer ${t}`),
          fc.constantFrom('Bearer', '', `Bearer ${account.adminKey.token}`, `Bearer ${adminSession}`),
        ),
        { nil: undefined, freq: 12 },
      ),
    });
    const reports = requestsFor(all.filter((c) => c !== own[5]));
    const beatsOn = requestsFor(all);
    const shaped = fc.record(
      {
        status: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('success', 'failure') }, text),
        output: storeValue,
        error: fc.oneof(
          fc.record(
            {
              code: fc.oneof(fc.constantFrom('BUILD_FAILED', 'lower', '', 'A'.repeat(65)), text),
              message: fc.oneof(
                text,
                fc.integer({ min: 990, max: 1010 }).map((n) => 'm'.repeat(n)),
              ),
            },
            { requiredKeys: [] },
          ),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: [] },
    );
    /** A 200 only for the callback the token belongs to. */
    const owned = (req: Request, body: { callbackId: string }) => {
      const c = all.find((x) => x.callbackId === req.params?.callbackId);
      expect(c, `answered for ${req.params?.callbackId}`).toBeDefined();
      expect(req.headers.authorization?.trim().split(/\s+/)[1]).toBe(c?.token);
      expect(body.callbackId).toBe(c?.callbackId);
    };
    let reported = 0;
    await fc.assert(
      fc.asyncProperty(
        request(reports.auth, bodies(shaped, { min: 256 * 1024, max: 260 * 1024 }), { params: reports.params }),
        async (req) => {
          const path = '/api/v1/callbacks/{callbackId}';
          const res = await check(reportHandler, 'POST', path, req, [200, 400, 401, 404, 409, 413, 415, 429]);
          if (res.status !== 200) return;
          reported++;
          owned(req, res.json);
          expect(['SUCCEEDED', 'FAILED']).toContain(res.json.status);
          expect(JSON.stringify(res.json)).not.toContain('tokenHash');
        },
      ),
      runsWith(
        RUNS,
        good(`Bearer ${own[0]?.token}`, {
          json: { status: 'success', output: { a: 1 } },
          params: { callbackId: own[0]?.callbackId as string },
        }),
      ),
    );
    expect(reported).toBeGreaterThan(0);
    let beats = 0;
    await fc.assert(
      fc.asyncProperty(
        request(beatsOn.auth, bodies(shaped, { min: 64 * 1024, max: 70 * 1024 }), { params: beatsOn.params }),
        async (req) => {
          const path = '/api/v1/callbacks/{callbackId}/heartbeat';
          const res = await check(heartbeatHandler, 'POST', path, req, [200, 400, 401, 404, 409, 413, 415, 429]);
          if (res.status !== 200) return;
          beats++;
          owned(req, res.json);
          expect(res.json.status).toBe('PENDING');
        },
      ),
      runsWith(RUNS, good(`Bearer ${own[5]?.token}`, { params: { callbackId: own[5]?.callbackId as string } })),
    );
    expect(beats).toBeGreaterThan(0);
  });
});
