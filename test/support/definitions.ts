// The full example definition of the workflows docs (with a well-formed notification secret), and
// after it a switch, a wait_for_callback and a for_each: shared by the tests that need a definition
// using every step type (test/unit/step-registry.test.ts checks it uses every one the registry has).

export const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SECRET = EXAMPLE_SECRET;

/** A fresh copy each call, so tests may mutate it. */
export const exampleDefinition = (): any => ({
  variables: {
    env: { type: 'string', default: 'staging' },
    amount: { type: 'number', default: 0 },
    urgent: { type: 'boolean', default: false },
  },
  steps: [
    { id: 'prepare', type: 'set', values: { summary: "{% 'Deploy to ' & $vars.env %}" } },
    {
      id: 'approve',
      type: 'manual_approval',
      title: '{% $vars.summary %}',
      reviewers: ['role:admin'],
      timeoutSeconds: 86400,
      onTimeout: 'fail',
      form: [
        { name: 'ticket', type: 'string', required: true },
        { name: 'amount', type: 'number', default: '{% $vars.amount %}' },
      ],
    },
    {
      id: 'notify',
      type: 'http_request',
      method: 'POST',
      url: 'https://ops.example/hook',
      headers: { 'content-type': 'application/json' },
      body: '{% $vars %}',
      timeoutMs: 10000,
      saveAs: 'notifyResponse',
    },
    { id: 'report', type: 'artifact', name: 'report.json', contentType: 'application/json', content: '{% $vars %}' },
    { id: 'cool-down', type: 'delay', seconds: 30 },
    { id: 'too-big', type: 'fail', when: '{% $vars.amount > 1000 %}', message: 'amount too large' },
    { id: 'route', type: 'switch', cases: [{ when: '{% $vars.urgent %}', next: 'page' }], default: 'each-region' },
    {
      id: 'page',
      type: 'wait_for_callback',
      timeoutSeconds: 3600,
      onTimeout: 'continue',
      request: { method: 'POST', url: 'https://pager.example/incidents', body: { callback: '{% $callback.url %}' } },
    },
    {
      id: 'each-region',
      type: 'for_each',
      items: "{% ['eu', 'us'] %}",
      steps: [{ id: 'region', type: 'set', values: { region: "{% 'deploy-' & $item %}" } }],
    },
  ],
  output: "{% { 'summary': $vars.summary, 'ticket': $vars.ticket } %}",
  notifications: [{ url: 'https://ops.example/events', events: ['approval.requested'], secret: SECRET }],
});
