import { WorkflowDefinition } from '../../shared/engine/definition.ts';

/** An n-step `set` workflow: each step sets one variable from an expression (the bench's runs). */
export const setFlow = (steps: number) =>
  WorkflowDefinition.parse({
    variables: { n: { type: 'number', default: 0 } },
    steps: Array.from({ length: steps }, (_, i) => ({ id: `s${i}`, type: 'set', values: { [`v${i}`]: `{% $vars.n + ${i} %}` } })),
  });

/** One manual approval by an admin: runs wait at it (WAITING_APPROVAL) until decided. */
export const approvalFlow = () =>
  WorkflowDefinition.parse({
    steps: [{ id: 'approve', type: 'manual_approval', title: 'Bench', reviewers: ['role:admin'] }],
  });

/** One http_request to `base` (a local listener) with a retry policy: its target fails twice, then answers (the bench's retried run). */
export const retryFlow = (base: string) =>
  WorkflowDefinition.parse({
    steps: [
      {
        id: 'call',
        type: 'http_request',
        url: `{% '${base}/flaky/' & $execution.id %}`,
        timeoutMs: 2000,
        retry: { maxAttempts: 3, intervalSeconds: 1, backoffRate: 1, jitter: 'none' },
      },
    ],
  });

/** One wait_for_callback whose request hands the listener at `base` its url and token (the bench's callback round trip). */
export const callbackFlow = (base: string) =>
  WorkflowDefinition.parse({
    steps: [
      {
        id: 'wait',
        type: 'wait_for_callback',
        timeoutSeconds: 600,
        request: {
          method: 'POST',
          url: `{% '${base}/capture/' & $execution.id %}`,
          body: "{% { 'url': $callback.url, 'token': $callback.token } %}",
        },
      },
    ],
  });

/** A 3-case switch on the run's `n` (1 from the bench's triggers), each branch one `set` ending the run. */
export const switchFlow = () =>
  WorkflowDefinition.parse({
    variables: { n: { type: 'number', default: 0 } },
    steps: [
      {
        id: 'route',
        type: 'switch',
        cases: [0, 1, 2].map((n) => ({ when: `{% $vars.n = ${n} %}`, next: `case${n}` })),
      },
      ...[0, 1, 2].map((n) => ({ id: `case${n}`, type: 'set', values: { chose: n }, next: '$end' })),
    ],
  });

/** A `for_each` over `items` numbers whose one nested step is a `set`. */
export const forEachFlow = (items: number) =>
  WorkflowDefinition.parse({
    steps: [
      { id: 'each', type: 'for_each', items: `{% [1..${items}] %}`, steps: [{ id: 'keep', type: 'set', values: { last: '{% $item %}' } }] },
    ],
  });

/** A `set` and a `switch` jumping back to it `rounds` times: 2 × `rounds` step executions, none with I/O. */
export const jumpLoopFlow = (rounds: number) =>
  WorkflowDefinition.parse({
    variables: { i: { type: 'number', default: 0 } },
    steps: [
      { id: 'inc', type: 'set', values: { i: '{% $vars.i + 1 %}' } },
      { id: 'again', type: 'switch', cases: [{ when: `{% $vars.i < ${rounds} %}`, next: 'inc' }], default: '$end' },
    ],
  });

/**
 * The heat model's scenario (b): ten steps with one of each waiting construct. Three `set`, an
 * http_request to `base` (a local listener), two `set`, a manual approval with a deadline and hourly
 * reminders, a `set`, a wait_for_callback whose request hands the listener its url and token, a `set`.
 */
export const tenStepFlow = (base: string) =>
  WorkflowDefinition.parse({
    variables: { n: { type: 'number', default: 0 } },
    steps: [
      ...[0, 1, 2].map((i) => ({ id: `s${i}`, type: 'set', values: { [`v${i}`]: `{% $vars.n + ${i} %}` } })),
      { id: 'call', type: 'http_request', url: `{% '${base}/ok/' & $execution.id %}`, timeoutMs: 2000 },
      ...[3, 4].map((i) => ({ id: `s${i}`, type: 'set', values: { [`v${i}`]: `{% $vars.n + ${i} %}` } })),
      {
        id: 'approve',
        type: 'manual_approval',
        title: 'Bench',
        reviewers: ['role:admin'],
        timeoutSeconds: 86_400,
        remind: { everySeconds: 3600, max: 3 },
      },
      { id: 's5', type: 'set', values: { v5: '{% $vars.n + 5 %}' } },
      {
        id: 'wait',
        type: 'wait_for_callback',
        timeoutSeconds: 600,
        request: {
          method: 'POST',
          url: `{% '${base}/capture/' & $execution.id %}`,
          body: "{% { 'url': $callback.url, 'token': $callback.token } %}",
        },
      },
      { id: 's6', type: 'set', values: { v6: '{% $vars.n + 6 %}' } },
    ],
  });

/** One manual approval reminding its reviewers every minute (the heat model's reminders). */
export const remindedApprovalFlow = () =>
  WorkflowDefinition.parse({
    steps: [{ id: 'approve', type: 'manual_approval', title: 'Bench', reviewers: ['role:admin'], remind: { everySeconds: 60, max: 5 } }],
  });

/** The realistic workload's shape (issue 32 item 4): set → http_request (a listener answering after 20 ms) → switch → set. */
export const realisticFlow = (base: string) =>
  WorkflowDefinition.parse({
    variables: { n: { type: 'number', default: 0 } },
    steps: [
      { id: 'prepare', type: 'set', values: { amount: '{% $vars.n + 1 %}' } },
      { id: 'call', type: 'http_request', url: `{% '${base}/slow/' & $execution.id %}`, timeoutMs: 2000 },
      {
        id: 'route',
        type: 'switch',
        cases: [{ when: '{% $steps.call.status = 200 %}', next: 'ok' }],
        default: 'ok',
      },
      { id: 'ok', type: 'set', values: { done: true } },
    ],
  });
