import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventType } from '../../shared/db/event-types.ts';
import { WorkflowDefinition, type WorkflowDefinition as Definition } from '../../shared/engine/definition.ts';
import { applyVariableDefaults } from '../../shared/engine/variables.ts';
import { WorkflowBody, WorkflowPatch } from '../../shared/schemas/workflows.ts';
import { fieldErrors } from '../../shared/http/middleware/parse-request.ts';
import { exampleDefinition } from '../support/definitions.ts';

const USER = 'usr_01hzy3k8q9v7w6x5t4s3r2p1n0';

/** A full example definition (the format: docs/workflows.md). */
const example = exampleDefinition;

const errorsOf = (input: unknown) => {
  const r = WorkflowDefinition.safeParse(input);
  return r.success ? [] : fieldErrors(r.error);
};
const pathsOf = (input: unknown) => errorsOf(input).map((e) => e.path);

/** A definition whose only step is `step` (with an id). */
const withStep = (step: Record<string, unknown>) => ({ steps: [{ id: 's', ...step }] });
const stepPaths = (step: Record<string, unknown>) => pathsOf(withStep(step));

describe('WorkflowDefinition', () => {
  it('parses a full example definition and fills defaults', () => {
    const r = WorkflowDefinition.safeParse(example());
    expect(r.success ? [] : fieldErrors(r.error)).toEqual([]);
    const def = r.data!;
    expect(def.steps.map((s) => s.type)).toEqual([
      'set',
      'manual_approval',
      'http_request',
      'artifact',
      'delay',
      'fail',
      'switch',
      'wait_for_callback',
      'for_each',
    ]);
    const approve = def.steps[1];
    expect(approve?.type === 'manual_approval' && approve.onReject).toBe('fail');
    expect(approve?.type === 'manual_approval' && approve.form?.[1]?.required).toBe(false);
    const notify = def.steps[2];
    expect(notify?.type === 'http_request' && notify.allowFailure).toBe(false);
  });

  it('fills http_request defaults', () => {
    const r = WorkflowDefinition.parse(withStep({ type: 'http_request', url: 'http://localhost:3000/x' }));
    expect(r.steps[0]).toEqual({
      id: 's',
      type: 'http_request',
      url: 'http://localhost:3000/x',
      method: 'GET',
      timeoutMs: 10000,
      allowFailure: false,
    });
  });

  it('reports an unknown step type at steps.N.type', () => {
    const def = example();
    (def.steps[3] as { type: string }).type = 'email';
    expect(pathsOf(def)).toEqual(['steps.3.type']);
    expect(stepPaths({})).toEqual(['steps.0.type']);
  });

  it('reports duplicate step ids at the duplicate', () => {
    const def = example();
    def.steps[4]!.id = 'notify';
    expect(errorsOf(def)).toEqual([{ path: 'steps.4.id', message: expect.stringContaining('duplicate step id "notify"') }]);
  });

  it('accepts 1 to 100 steps', () => {
    const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `s${i}`, type: 'delay', seconds: 1 }));
    expect(pathsOf({ steps: steps(100) })).toEqual([]);
    expect(pathsOf({ steps: steps(101) })).toEqual(['steps']);
    expect(pathsOf({ steps: [] })).toEqual(['steps']);
    expect(pathsOf({})).toEqual(['steps']);
  });

  it('reports a broken expression at its exact path with the jsonata message', () => {
    const def = example();
    (def.steps[2] as { body: unknown }).body = { a: ['{% $vars.x + %}'] };
    expect(errorsOf(def)).toEqual([{ path: 'steps.2.body.a.0', message: expect.stringContaining('Unexpected end of expression') }]);
    const other = example();
    other.output = '{% $foo( %}';
    other.steps[0] = { id: 'prepare', type: 'set', values: { summary: '{% [1, 2 %}' } };
    expect(pathsOf(other)).toEqual(['steps.0.values.summary', 'output']);
  });

  it('reports broken expressions even when other fields are also wrong', () => {
    const def = example();
    (def.steps[4] as { seconds: number }).seconds = 0;
    (def.steps[2] as { body: unknown }).body = { a: ['{% ) %}'] };
    expect(pathsOf(def).sort()).toEqual(['steps.2.body.a.0', 'steps.4.seconds']);
  });

  it('checks ids, titles and when', () => {
    expect(stepPaths({ type: 'delay', seconds: 1, id: 'a b' })).toEqual(['steps.0.id']);
    expect(stepPaths({ type: 'delay', seconds: 1, id: 'x'.repeat(65) })).toEqual(['steps.0.id']);
    expect(stepPaths({ type: 'delay', seconds: 1, title: 3 })).toEqual(['steps.0.title']);
    expect(stepPaths({ type: 'delay', seconds: 1, when: true })).toEqual([]);
    expect(stepPaths({ type: 'delay', seconds: 1, when: '{% $vars.go %}' })).toEqual([]);
    expect(stepPaths({ type: 'delay', seconds: 1, when: 'yes' })).toEqual(['steps.0.when']);
    expect(stepPaths({ type: 'delay', seconds: 1, when: 1 })).toEqual(['steps.0.when']);
    expect(stepPaths({ type: 'delay', seconds: 1, when: '{% $vars. %}' })).toEqual(['steps.0.when']);
    expect(stepPaths({ type: 'delay', seconds: 1, extra: 1 })).toEqual(['steps.0.extra']);
  });

  it('checks set steps', () => {
    expect(stepPaths({ type: 'set', values: { ok_1: { a: [1, null] } } })).toEqual([]);
    expect(stepPaths({ type: 'set', values: { '1bad': 1 } })).toEqual(['steps.0.values.1bad']);
    expect(stepPaths({ type: 'set', values: { a: undefined } })).toEqual(['steps.0.values.a']);
    expect(stepPaths({ type: 'set', values: { a: { b: Number.NaN } } })).toEqual(['steps.0.values.a.b']);
    expect(stepPaths({ type: 'set' })).toEqual(['steps.0.values']);
  });

  it('checks http_request steps', () => {
    const ok = { type: 'http_request', url: 'https://api.example/x' };
    expect(stepPaths({ ...ok, url: '{% $vars.base & "/x" %}' })).toEqual([]);
    expect(stepPaths({ ...ok, url: '/relative' })).toEqual(['steps.0.url']);
    expect(stepPaths({ ...ok, url: 'ftp://x.example/' })).toEqual(['steps.0.url']);
    expect(stepPaths({ ...ok, method: 'TRACE' })).toEqual(['steps.0.method']);
    expect(stepPaths({ ...ok, headers: { 'x-a': 1 } })).toEqual(['steps.0.headers.x-a']);
    expect(stepPaths({ ...ok, headers: { 'bad header': 'v' } })).toEqual(['steps.0.headers.bad header']);
    expect(stepPaths({ ...ok, timeoutMs: 30001 })).toEqual(['steps.0.timeoutMs']);
    expect(stepPaths({ ...ok, timeoutMs: 0 })).toEqual(['steps.0.timeoutMs']);
    expect(stepPaths({ ...ok, timeoutMs: 1.5 })).toEqual(['steps.0.timeoutMs']);
    expect(stepPaths({ ...ok, saveAs: 'a-b' })).toEqual(['steps.0.saveAs']);
    expect(stepPaths({ ...ok, allowFailure: 'yes' })).toEqual(['steps.0.allowFailure']);
    expect(stepPaths({ ...ok, method: 'GET', body: { a: 1 } })).toEqual(['steps.0.body']);
    expect(stepPaths({ ...ok, method: 'PUT', body: { a: 1 } })).toEqual([]);
  });

  it('checks manual_approval steps', () => {
    const ok = { type: 'manual_approval', title: 'Go?', reviewers: ['role:member', `user:${USER}`] };
    expect(stepPaths(ok)).toEqual([]);
    expect(stepPaths({ ...ok, title: undefined })).toEqual(['steps.0.title']);
    expect(stepPaths({ ...ok, reviewers: [] })).toEqual(['steps.0.reviewers']);
    expect(stepPaths({ ...ok, reviewers: Array(51).fill('role:admin') })).toEqual(['steps.0.reviewers']);
    expect(stepPaths({ ...ok, reviewers: ['role:admin', 'role:owner', 'user:usr_short', `user:${USER.toUpperCase()}`, USER] })).toEqual([
      'steps.0.reviewers.1',
      'steps.0.reviewers.2',
      'steps.0.reviewers.3',
      'steps.0.reviewers.4',
    ]);
    expect(stepPaths({ ...ok, timeoutSeconds: 59 })).toEqual(['steps.0.timeoutSeconds']);
    expect(stepPaths({ ...ok, timeoutSeconds: 2592001 })).toEqual(['steps.0.timeoutSeconds']);
    expect(stepPaths({ ...ok, onTimeout: 'approve', onReject: 'continue' })).toEqual([]);
    expect(stepPaths({ ...ok, onTimeout: 'ignore' })).toEqual(['steps.0.onTimeout']);
    expect(stepPaths({ ...ok, onReject: 'approve' })).toEqual(['steps.0.onReject']);
    // A quorum: 1..100 approvals, at most the named users when only users are listed.
    expect(stepPaths({ ...ok, minApprovals: 5 })).toEqual([]);
    expect(stepPaths({ ...ok, minApprovals: 0 })).toEqual(['steps.0.minApprovals']);
    expect(stepPaths({ ...ok, minApprovals: 1.5 })).toEqual(['steps.0.minApprovals']);
    expect(stepPaths({ ...ok, minApprovals: 101 })).toEqual(['steps.0.minApprovals']);
    expect(stepPaths({ ...ok, reviewers: [`user:${USER}`], minApprovals: 1 })).toEqual([]);
    expect(stepPaths({ ...ok, reviewers: [`user:${USER}`, `user:${USER}`], minApprovals: 2 })).toEqual(['steps.0.minApprovals']);
  });

  it('checks approval forms', () => {
    const step = (form: unknown[]) => ({ type: 'manual_approval', title: 'Go?', reviewers: ['role:admin'], form });
    expect(stepPaths(step([{ name: 'n', type: 'number', default: 3, enum: [1, 3] }]))).toEqual([]);
    expect(stepPaths(step([{ name: 'n', type: 'number', default: '3' }]))).toEqual(['steps.0.form.0.default']);
    expect(stepPaths(step([{ name: 'b', type: 'boolean', default: 1 }]))).toEqual(['steps.0.form.0.default']);
    expect(stepPaths(step([{ name: 's', type: 'string', default: 1 }]))).toEqual(['steps.0.form.0.default']);
    expect(stepPaths(step([{ name: 'n', type: 'number', default: '{% $vars.n %}' }]))).toEqual([]);
    expect(stepPaths(step([{ name: 'n', type: 'number', enum: [1, 'two'] }]))).toEqual(['steps.0.form.0.enum.1']);
    expect(stepPaths(step([{ name: 'n', type: 'number', default: 2, enum: [1, 3] }]))).toEqual(['steps.0.form.0.default']);
    expect(stepPaths(step([{ name: 'n', type: 'date' }]))).toEqual(['steps.0.form.0.type']);
    expect(
      stepPaths(
        step([
          { name: 'a', type: 'string' },
          { name: 'b', type: 'string' },
          { name: 'a', type: 'number' },
        ]),
      ),
    ).toEqual(['steps.0.form.2.name']);
    expect(stepPaths(step(Array.from({ length: 51 }, (_, i) => ({ name: `f${i}`, type: 'string' }))))).toEqual(['steps.0.form']);
  });

  it('checks artifact steps', () => {
    const ok = { type: 'artifact', name: 'out.txt', content: 'hello' };
    expect(stepPaths(ok)).toEqual([]);
    expect(stepPaths({ ...ok, name: 'a/b' })).toEqual(['steps.0.name']);
    expect(stepPaths({ ...ok, name: 'a\\b' })).toEqual(['steps.0.name']);
    expect(stepPaths({ ...ok, name: '' })).toEqual(['steps.0.name']);
    expect(stepPaths({ ...ok, name: 'x'.repeat(256) })).toEqual(['steps.0.name']);
    expect(stepPaths({ ...ok, content: undefined })).toEqual(['steps.0.content']);
    expect(stepPaths({ ...ok, contentType: 5 })).toEqual(['steps.0.contentType']);
  });

  it('checks delay and fail steps', () => {
    expect(stepPaths({ type: 'delay', seconds: 86400 })).toEqual([]);
    expect(stepPaths({ type: 'delay', seconds: 86401 })).toEqual(['steps.0.seconds']);
    expect(stepPaths({ type: 'delay', seconds: 0 })).toEqual(['steps.0.seconds']);
    expect(stepPaths({ type: 'delay', seconds: 1.5 })).toEqual(['steps.0.seconds']);
    expect(stepPaths({ type: 'fail', message: '{% "too big: " & $vars.amount %}', code: 'TOO_BIG' })).toEqual([]);
    expect(stepPaths({ type: 'fail', message: 'x', code: 'tooBig' })).toEqual(['steps.0.code']);
    expect(stepPaths({ type: 'fail' })).toEqual(['steps.0.message']);
  });

  it('checks variables', () => {
    const vars = (variables: unknown) => pathsOf({ variables, steps: [{ id: 'd', type: 'delay', seconds: 1 }] });
    expect(
      vars({ o: { type: 'object', default: { a: 1 } }, l: { type: 'array', default: [] }, s: { type: 'string', description: 'x' } }),
    ).toEqual([]);
    expect(vars({ n: { type: 'number', default: '1' } })).toEqual(['variables.n.default']);
    expect(vars({ o: { type: 'object', default: [] } })).toEqual(['variables.o.default']);
    expect(vars({ l: { type: 'array', default: {} } })).toEqual(['variables.l.default']);
    expect(vars({ b: { type: 'boolean', default: null } })).toEqual(['variables.b.default']);
    expect(vars({ d: { type: 'date' } })).toEqual(['variables.d.type']);
    expect(vars({ 'bad-name': { type: 'string' } })).toEqual(['variables.bad-name']);
  });

  it('checks notifications', () => {
    const notif = (n: Record<string, unknown>) => pathsOf({ ...example(), notifications: [{ ...example().notifications[0], ...n }] });
    expect(notif({ secret: 'whsec_short' })).toEqual(['notifications.0.secret']);
    expect(notif({ secret: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })).toEqual(['notifications.0.secret']);
    expect(notif({ url: 'http://ops.example/events' })).toEqual(['notifications.0.url']);
    expect(notif({ url: 'http://localhost:4000/events' })).toEqual([]);
    expect(notif({ url: 'http://127.0.0.1:4000/events' })).toEqual([]);
    expect(notif({ url: 'not a url' })).toEqual(['notifications.0.url']);
    expect(notif({ events: [] })).toEqual(['notifications.0.events']);
    expect(notif({ events: ['step.started', 'run.started'] })).toEqual(['notifications.0.events.1']);
    expect(notif({ events: EventType.options })).toEqual([]);
    const many = Array.from({ length: 11 }, () => example().notifications[0]);
    expect(pathsOf({ ...example(), notifications: many })).toEqual(['notifications']);
  });

  it('lists the event types, execution.resumed, execution.retried, step.retrying, the approval reminders and the schedules among them', () => {
    expect(EventType.options).toHaveLength(new Set(EventType.options).size);
    expect(EventType.options).toEqual(
      expect.arrayContaining([
        'execution.resumed',
        'execution.retried',
        'step.retrying',
        'approval.reminded',
        'approval.escalated',
        'schedule.fired',
        'schedule.skipped',
        'schedule.failed',
      ]),
    );
  });

  it('refuses unknown top-level keys and deeply nested JSON', () => {
    expect(errorsOf({ ...example(), extra: 1 })).toEqual([{ path: 'extra', message: 'unrecognized key "extra"' }]);
    let deep: unknown = '{% 1 +  %}';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const errors = errorsOf({ ...example(), output: deep });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/nested deeper/);
  });

  it('never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        WorkflowDefinition.safeParse(v);
        WorkflowDefinition.safeParse({ steps: [v] });
      }),
      { numRuns: 300 },
    );
    const field = fc.constantFrom(
      'id',
      'type',
      'when',
      'title',
      'values',
      'url',
      'body',
      'reviewers',
      'form',
      'content',
      'seconds',
      'message',
    );
    const type = fc.constantFrom('set', 'http_request', 'manual_approval', 'artifact', 'delay', 'fail', 'other');
    const expressionish = fc.string().map((s) => `{% ${s} %}`);
    const value = fc.oneof(fc.jsonValue(), expressionish, fc.anything());
    const step = fc.tuple(type, fc.dictionary(field, value)).map(([t, rest]) => ({ ...rest, type: t }));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 5 }), fc.option(value), (steps, output) => {
        const r = WorkflowDefinition.safeParse({ steps, output });
        if (!r.success) for (const e of fieldErrors(r.error)) expect(typeof e.message).toBe('string');
      }),
      { numRuns: 300 },
    );
  });
});

describe('applyVariableDefaults', () => {
  const def = WorkflowDefinition.parse(example()) as Definition;

  it('fills defaults for absent declared variables', () => {
    expect(applyVariableDefaults(def, {})).toEqual({ ok: true, variables: { env: 'staging', amount: 0, urgent: false } });
    expect(applyVariableDefaults({}, {})).toEqual({ ok: true, variables: {} });
  });

  it('keeps given values of the declared type and passes undeclared inputs through', () => {
    const r = applyVariableDefaults(def, { amount: 12.5, extra: { any: ['thing'] }, env: 'prod' });
    expect(r).toEqual({ ok: true, variables: { env: 'prod', amount: 12.5, urgent: false, extra: { any: ['thing'] } } });
  });

  it('reports inputs of the wrong type at variables.<name>', () => {
    expect(applyVariableDefaults(def, { amount: '12', urgent: 'yes', env: null })).toEqual({
      ok: false,
      errors: [
        { path: 'variables.env', message: 'must be a string' },
        { path: 'variables.amount', message: 'must be a number' },
        { path: 'variables.urgent', message: 'must be a boolean' },
      ],
    });
    const typed = WorkflowDefinition.parse({
      variables: { o: { type: 'object' }, l: { type: 'array' } },
      steps: [{ id: 'd', type: 'delay', seconds: 1 }],
    });
    expect(applyVariableDefaults(typed, { o: [], l: {} })).toMatchObject({
      ok: false,
      errors: [{ path: 'variables.o' }, { path: 'variables.l' }],
    });
    expect(applyVariableDefaults(typed, { o: {}, l: [] })).toEqual({ ok: true, variables: { o: {}, l: [] } });
  });

  it('copies defaults so runs never share them', () => {
    const typed = WorkflowDefinition.parse({
      variables: { l: { type: 'array', default: [1] } },
      steps: [{ id: 'd', type: 'delay', seconds: 1 }],
    });
    const r = applyVariableDefaults(typed, {});
    if (!r.ok) throw new Error('expected ok');
    (r.variables.l as number[]).push(2);
    expect(typed.variables?.l?.default).toEqual([1]);
  });

  it('caps the variables at 256 KiB of JSON', () => {
    const under = 'x'.repeat(256 * 1024 - 100);
    expect(applyVariableDefaults(def, { blob: under }).ok).toBe(true);
    expect(applyVariableDefaults(def, { blob: 'x'.repeat(256 * 1024) })).toEqual({
      ok: false,
      errors: [{ path: 'variables', message: expect.stringContaining('262144 bytes') }],
    });
    expect(applyVariableDefaults(def, { blob: 'é'.repeat(140 * 1024) }).ok).toBe(false);
  });
});

describe('WorkflowBody and WorkflowPatch', () => {
  it('parses a create body with defaults', () => {
    const r = WorkflowBody.parse({ name: ' Deploy ', definition: example() });
    expect(r).toMatchObject({ name: 'Deploy', recovery: false, editors: [] });
    expect(WorkflowBody.parse({ name: 'x', definition: example(), recovery: true, editors: [USER] }).editors).toEqual([USER]);
  });

  it('reports nested definition faults under definition.', () => {
    const def = example();
    def.steps[4]!.id = 'notify';
    const r = WorkflowBody.safeParse({ name: '', description: 'x'.repeat(2001), definition: def, editors: ['bob'] });
    expect(r.success ? [] : fieldErrors(r.error).map((e) => e.path)).toEqual(['name', 'description', 'definition.steps.4.id', 'editors.0']);
  });

  it('accepts a patch with at least one field and applies no defaults', () => {
    expect(WorkflowPatch.parse({ recovery: true })).toEqual({ recovery: true });
    expect(WorkflowPatch.parse({ definition: example() }).definition?.steps).toHaveLength(9);
    expect(WorkflowPatch.safeParse({}).success).toBe(false);
    expect(WorkflowPatch.safeParse({ name: 'x'.repeat(201) }).success).toBe(false);
  });
});

describe('control flow in definitions', () => {
  const loop = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
    id: 'each',
    type: 'for_each',
    items: '{% [1, 2] %}',
    steps,
    ...extra,
  });

  it('accepts next, switch, for_each, onError and maxStepExecutions, and fills maxItems', () => {
    const def = WorkflowDefinition.parse({
      maxStepExecutions: 10_000,
      steps: [
        { id: 'pick', type: 'switch', cases: [{ when: '{% $vars.x = 1 %}', next: 'each' }], default: '$end' },
        loop([
          { id: 'in', type: 'set', values: { a: '{% $item %}' }, next: 'in2', onError: { next: 'in2' } },
          { id: 'in2', type: 'set', values: {} },
        ]),
        { id: 'back', type: 'set', values: {}, next: 'pick', onError: 'continue' },
      ],
    });
    const each = def.steps[1];
    expect(each?.type === 'for_each' && each.maxItems).toBe(1000);
  });

  it('refuses targets that do not exist in the same list, at their path', () => {
    expect(
      errorsOf({
        steps: [
          { id: 'a', type: 'set', values: {}, next: 'nope' },
          { id: 'pick', type: 'switch', cases: [{ when: true, next: 'in' }], default: 'zz' },
          loop([{ id: 'in', type: 'set', values: {}, next: 'a', onError: { next: 'gone' } }]),
        ],
      }).map((e) => e.path),
    ).toEqual(['steps.0.next', 'steps.1.cases.0.next', 'steps.1.default', 'steps.2.steps.0.next', 'steps.2.steps.0.onError.next']);
    expect(stepPaths({ type: 'set', values: {}, next: 'bad id!' })).toEqual(['steps.0.next']);
  });

  it('refuses a for_each inside a for_each, ids repeated anywhere, limits out of range, and broken expressions in items and cases', () => {
    expect(pathsOf({ steps: [loop([loop([{ id: 'x', type: 'set', values: {} }], { id: 'inner' })])] })).toContain('steps.0.steps.0.type');
    expect(errorsOf({ steps: [{ id: 'in', type: 'set', values: {} }, loop([{ id: 'in', type: 'set', values: {} }])] })).toEqual([
      { path: 'steps.1.steps.0.id', message: expect.stringContaining('duplicate step id "in" (also steps.0.id)') },
    ]);
    expect(pathsOf({ steps: [loop([{ id: 'x', type: 'set', values: {} }], { maxItems: 1001 })] })).toEqual(['steps.0.maxItems']);
    expect(pathsOf({ maxStepExecutions: 10_001, steps: [{ id: 'x', type: 'set', values: {} }] })).toEqual(['maxStepExecutions']);
    expect(pathsOf({ steps: [loop([{ id: 'x', type: 'set', values: {} }], { items: '{% [1, %}' })] })).toEqual(['steps.0.items']);
    expect(pathsOf({ steps: [loop([{ id: 'x', type: 'set', values: {} }], { items: 'not an expression' })] })).toEqual(['steps.0.items']);
    expect(pathsOf(withStep({ type: 'switch', cases: [{ when: '{% $x = %}', next: '$end' }] }))).toEqual(['steps.0.cases.0.when']);
    expect(pathsOf(withStep({ type: 'switch', cases: [] }))).toEqual(['steps.0.cases']);
    expect(stepPaths({ type: 'set', values: {}, onError: 'retry' })).toEqual(['steps.0.onError']);
  });
});

describe('secrets inside a for_each', () => {
  it('are masked in views and kept by an update that sends the mask back, like top-level ones', async () => {
    const { maskDefinition, restoreSecrets } = await import('../../shared/domain/definition-secrets.ts');
    const token = 'Bearer abcdefghijklmnopqrstuvwxyz';
    const def = WorkflowDefinition.parse({
      steps: [
        {
          id: 'each',
          type: 'for_each',
          items: '{% [1] %}',
          steps: [{ id: 'call', type: 'http_request', url: 'https://example.com/x', headers: { authorization: token } }],
        },
      ],
    });
    const shown = maskDefinition(def);
    const nested = (d: typeof def) =>
      (d.steps[0]?.type === 'for_each' ? d.steps[0].steps[0] : undefined) as { headers: Record<string, string> };
    expect(nested(shown).headers.authorization).toBe('••••wxyz');
    expect(JSON.stringify(shown)).not.toContain('abcdefghij');
    expect(nested(restoreSecrets(shown, def)).headers.authorization).toBe(token);
    expect(() => restoreSecrets(shown, undefined)).toThrow();
  });

  it('$secrets is allowed in a nested http_request, and nowhere else in the loop', () => {
    const loop = (nested: Record<string, unknown>) => ({ steps: [{ id: 'each', type: 'for_each', items: '{% [1] %}', steps: [nested] }] });
    expect(
      pathsOf(loop({ id: 'c', type: 'http_request', url: 'https://example.com', headers: { authorization: '{% $secrets.TOKEN %}' } })),
    ).toEqual([]);
    expect(pathsOf(loop({ id: 's', type: 'set', values: { x: '{% $secrets.TOKEN %}' } }))).toEqual(['steps.0.steps.0.values.x']);
  });
});
