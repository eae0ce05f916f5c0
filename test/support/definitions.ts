// The full example definition of WORKFLOWS.md (with a well-formed notification secret), shared by
// the tests that need a definition using every step type.

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
  ],
  output: "{% { 'summary': $vars.summary, 'ticket': $vars.ticket } %}",
  notifications: [{ url: 'https://ops.example/events', events: ['approval.requested'], secret: SECRET }],
});
