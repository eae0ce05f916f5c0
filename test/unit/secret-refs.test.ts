import { describe, expect, it } from 'vitest';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { HOST_PATTERN, hostAllowed, secretRefs, stepSecretNames } from '../../shared/engine/secret-refs.ts';
import { fieldErrors } from '../../shared/http/middleware/parse-request.ts';

const errorsOf = (input: unknown) => {
  const r = WorkflowDefinition.safeParse(input);
  return r.success ? [] : fieldErrors(r.error);
};
const call = (fields: Record<string, unknown>) => ({
  id: 'call',
  type: 'http_request',
  method: 'POST',
  url: 'https://api.example.com/x',
  ...fields,
});
const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('$secrets references', () => {
  it('finds the names an expression reads statically, whatever the expression around them', () => {
    expect(secretRefs('$secrets.API_KEY')).toEqual({ names: ['API_KEY'], badNames: [], misused: false });
    expect(secretRefs('"Bearer " & $secrets.TOKEN & $secrets.TOKEN')).toEqual({ names: ['TOKEN'], badNames: [], misused: false });
    expect(secretRefs('{ "a": $secrets.A, "b": [$vars.x, $secrets.B_2] }').names.sort()).toEqual(['A', 'B_2']);
    expect(secretRefs('$vars.secrets & "$secrets.NOT_A_REF"')).toEqual({ names: [], badNames: [], misused: false });
  });

  it('reports malformed names and any dynamic use of $secrets', () => {
    expect(secretRefs('$secrets.lower_case').badNames).toEqual(['lower_case']);
    expect(secretRefs('$secrets.`A B`').badNames).toEqual(['A B']);
    expect(secretRefs(`$secrets.${'A'.repeat(65)}`).badNames).toHaveLength(1);
    for (const source of [
      '$secrets',
      '$secrets["A"]',
      '$lookup($secrets, "A")',
      '($s := $secrets; $s.A)',
      '$keys($secrets)',
      '$x.$secrets.A',
    ])
      expect(secretRefs(source).misused, source).toBe(true);
  });

  it('lists the secrets of an http_request from its url, headers and body only', () => {
    const step = {
      url: '{% "https://api.example.com/" & $secrets.PATH_KEY %}',
      headers: { authorization: '{% "Bearer " & $secrets.TOKEN %}', plain: 'x' },
      body: { nested: ['{% $secrets.BODY_KEY %}', '{% $vars.x %}'] },
    };
    expect(stepSecretNames(step).sort()).toEqual(['BODY_KEY', 'PATH_KEY', 'TOKEN']);
    expect(stepSecretNames({ url: 'https://x.test' })).toEqual([]);
  });
});

describe('WorkflowDefinition with $secrets', () => {
  it('accepts $secrets.NAME in an http_request url, headers and body, and as a notification secret', () => {
    const def = {
      steps: [
        call({
          url: '{% "https://api.example.com/?k=" & $secrets.QUERY_KEY %}',
          headers: { authorization: '{% "Bearer " & $secrets.API_TOKEN %}' },
          body: { token: '{% $secrets.API_TOKEN %}' },
        }),
      ],
      notifications: [
        { url: 'https://hooks.example.com/a', events: ['execution.failed'], secret: '{% $secrets.HOOK_SECRET %}' },
        { url: 'https://hooks.example.com/b', events: ['execution.failed'], secret: WHSEC },
      ],
    };
    expect(errorsOf(def)).toEqual([]);
  });

  it('refuses a malformed name with its path', () => {
    const errors = errorsOf({ steps: [call({ headers: { authorization: '{% "Bearer " & $secrets.lower_case %}' } })] });
    expect(errors).toEqual([{ path: 'steps.0.headers.authorization', message: expect.stringContaining('$secrets.lower_case') }]);
    const notification = errorsOf({
      steps: [{ id: 's', type: 'set', values: {} }],
      notifications: [{ url: 'https://hooks.example.com/a', events: ['execution.failed'], secret: '{% $secrets.bad %}' }],
    });
    expect(notification.map((e) => e.path)).toEqual(['notifications.0.secret']);
  });

  it('refuses $secrets where a value could reach variables, approvals, artifacts or the output', () => {
    const def = {
      steps: [
        { id: 'set', type: 'set', values: { leak: '{% $secrets.TOKEN %}' } },
        call({ when: '{% $secrets.TOKEN = "x" %}' }),
        { id: 'file', type: 'artifact', name: 'a.txt', content: '{% $secrets.TOKEN %}' },
        { id: 'stop', type: 'fail', message: '{% $secrets.TOKEN %}' },
      ],
      output: { token: '{% $secrets.TOKEN %}' },
    };
    expect(errorsOf(def).map((e) => e.path)).toEqual([
      'steps.0.values.leak',
      'steps.1.when',
      'steps.2.content',
      'steps.3.message',
      'output.token',
    ]);
    expect(errorsOf({ steps: [call({ body: { all: '{% $secrets %}' } })] })).toEqual([
      { path: 'steps.0.body.all', message: '$secrets may only be read as $secrets.NAME' },
    ]);
    // A notification secret is a whsec_ secret or exactly one reference.
    const mixed = errorsOf({
      steps: [{ id: 's', type: 'set', values: {} }],
      notifications: [{ url: 'https://hooks.example.com/a', events: ['execution.failed'], secret: '{% "whsec_" & $secrets.KEY %}' }],
    });
    expect(mixed.map((e) => e.path)).toContain('notifications.0.secret');
  });
});

describe('allowedHosts', () => {
  it('matches a name exactly (any case, trailing dot) and a *. pattern on subdomains at any depth, never the parent or a lookalike', () => {
    const hosts = ['api.stripe.com', '*.example.com'];
    for (const h of ['api.stripe.com', 'API.Stripe.com.', 'a.example.com', 'a.b.example.com']) expect(hostAllowed(hosts, h), h).toBe(true);
    for (const h of [
      'stripe.com',
      'xapi.stripe.com',
      'api.stripe.com.evil.test',
      'example.com',
      'badexample.com',
      'example.com.evil.test',
      '',
    ])
      expect(hostAllowed(hosts, h), h).toBe(false);
  });

  it('accepts host names and *. patterns only', () => {
    for (const ok of ['api.stripe.com', '*.example.com', 'localhost', '127.0.0.1', 'x-y.z_1.io'])
      expect(HOST_PATTERN.test(ok), ok).toBe(true);
    for (const bad of ['*', '*.', 'a.*.b', '**.a', 'https://a.b', 'a b', '-a.b', 'a..b', 'a/b', 'ä.b'])
      expect(HOST_PATTERN.test(bad), bad).toBe(false);
  });
});
