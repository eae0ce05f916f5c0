import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as listSecretsHandler } from '../../functions/http/secrets/list.ts';
import { handler as artifactsHandler } from '../../functions/http/v1/artifacts/list.ts';
import { handler as eventsHandler } from '../../functions/http/v1/executions/events.ts';
import { handler as getHandler } from '../../functions/http/v1/executions/get.ts';
import { handler as listHandler } from '../../functions/http/v1/executions/list.ts';
import { handler as resultHandler } from '../../functions/http/v1/executions/result.ts';
import { handler as login } from '../../functions/http/auth/login.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createSecret } from '../../shared/domain/account-secrets.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { logger } from '../../shared/logger.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { capturedLogs } from '../support/logs.ts';

// Account secrets in runs: a real http_request to a listener on 127.0.0.1 receives the values (URL,
// header, body), the listener echoes them back, and every answer of the API, every event and every
// log line shows `[redacted]` instead.

type Received = { path: string; query: string; headers: Record<string, string>; body: string };
let listener: Server;
let base: string;
/** A second host (127.0.0.2): where a redirect may try to take a bound secret. */
let other: Server;
const otherReceived: string[] = [];
const received: Received[] = [];

beforeAll(async () => {
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32,127.0.0.2/32' });
  other = createServer((req, res) => {
    otherReceived.push(req.url ?? '');
    res.writeHead(200).end('other');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.2', r));
  listener = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://listener');
    let body = '';
    req.on('data', (c) => {
      body += String(c);
    });
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headersDistinct).map(([k, v]) => [k, (v ?? []).join(', ')]));
      // A redirect to the other host (127.0.0.2), body and all (307).
      if (url.pathname === '/away') {
        received.push({ path: url.pathname, query: url.search, headers, body });
        res.writeHead(307, { location: `http://127.0.0.2:${(other.address() as { port: number }).port}/landed` }).end();
        return;
      }
      received.push({ path: url.pathname, query: url.search, headers, body });
      // The echo: the request back in the body, and the credential back in a response header.
      res
        .writeHead(200, { 'content-type': 'application/json', 'x-echo-authorization': headers.authorization ?? '' })
        .end(JSON.stringify({ url: req.url, authorization: headers.authorization ?? null, body: body ? JSON.parse(body) : null }));
    });
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
});
afterAll(() => {
  for (const server of [listener, other]) {
    server.closeAllConnections();
    server.close();
  }
});

const secretValue = () => `sv-${randomBytes(16).toString('hex')}`;
const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

async function givenRun(definition: unknown, secrets: Record<string, string>, allowedHosts?: string[]) {
  const a = await givenAccount();
  const admin = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' } as const;
  for (const [name, value] of Object.entries(secrets)) await createSecret(admin as never, { name, value, allowedHosts });
  const workflow = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'secrets', definition: WorkflowDefinition.parse(definition), recovery: false, editors: [] },
  );
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  return { ...a, workflow, execution };
}

const settled = (e: Pick<Execution, 'accountId' | 'executionId'>) =>
  eventually(
    () => getExecution(e.accountId, e.executionId) as Promise<Execution>,
    (x) => ['SUCCEEDED', 'FAILED'].includes(x.status),
  );

/** Every v1 answer about the run, as text. */
async function apiAnswers(token: string, executionId: string) {
  const auth = { authorization: `Bearer ${token}` };
  const params = { executionId };
  const answers = await Promise.all([
    invoke(getHandler, apiEvent({ path: `/api/v1/executions/${executionId}`, headers: auth, params })),
    invoke(eventsHandler, apiEvent({ path: `/api/v1/executions/${executionId}/events`, headers: auth, params })),
    invoke(resultHandler, apiEvent({ path: `/api/v1/executions/${executionId}/result`, headers: auth, params })),
    invoke(artifactsHandler, apiEvent({ path: `/api/v1/executions/${executionId}/artifacts`, headers: auth, params })),
    invoke(listHandler, apiEvent({ path: '/api/v1/executions', headers: auth })),
  ]);
  for (const a of answers) expect(a.status, a.body).toBe(200);
  return answers;
}

describe('account secrets in runs', () => {
  let stop: () => Promise<unknown>;
  beforeAll(() => {
    stop = startWorkers();
  });
  afterAll(() => stop());

  it('reach the listener through a real http_request, and read [redacted] in every answer, event, output and log line', async () => {
    const token = secretValue();
    const pathKey = secretValue();
    const hook = whsec();
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    });
    logger.setLogLevel('DEBUG');
    let run: Awaited<ReturnType<typeof givenRun>>;
    let done: Execution;
    try {
      run = await givenRun(
        {
          steps: [
            {
              id: 'call',
              type: 'http_request',
              method: 'POST',
              url: `{% "${base}/echo?key=" & $secrets.PATH_KEY %}`,
              headers: { authorization: '{% "Bearer " & $secrets.API_TOKEN %}' },
              body: { token: '{% $secrets.API_TOKEN %}', note: 'plain' },
              saveAs: 'reply',
            },
            { id: 'copy', type: 'set', values: { echoed: '{% $vars.reply.body.authorization %}' } },
          ],
          output: '{% { "reply": $steps.call, "echoed": $vars.echoed } %}',
          notifications: [{ url: `${base}/notify`, events: ['execution.succeeded'], secret: '{% $secrets.HOOK_SECRET %}' }],
        },
        { API_TOKEN: token, PATH_KEY: pathKey, HOOK_SECRET: hook, UNUSED: secretValue() },
      );
      done = await settled(run.execution);
      await eventually(
        async () => received.filter((r) => r.path === '/notify'),
        (n) => n.some((r) => r.body.includes(run.execution.executionId)),
      );
    } finally {
      logger.setLogLevel('SILENT');
      spy.mockRestore();
    }
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');

    // The listener got the real values: in the URL, a header and the body.
    const call = received.find((r) => r.path === '/echo' && r.query === `?key=${pathKey}`);
    expect(call?.headers.authorization).toBe(`Bearer ${token}`);
    expect(JSON.parse(call?.body ?? '{}')).toEqual({ token, note: 'plain' });

    // What the run kept reads [redacted] where the values were.
    expect(done.outputs.call).toEqual({
      status: 200,
      headers: expect.objectContaining({ 'x-echo-authorization': 'Bearer [redacted]' }),
      body: { url: '/echo?key=[redacted]', authorization: 'Bearer [redacted]', body: { token: '[redacted]', note: 'plain' } },
    });
    expect(done.variables).toMatchObject({ echoed: 'Bearer [redacted]' });

    const answers = await apiAnswers(run!.adminKey.token, done.executionId);
    const text = answers.map((a) => a.body).join('\n');
    expect(text).toContain('[redacted]');
    for (const v of [token, pathKey, hook]) {
      expect(text).not.toContain(v);
      expect(JSON.stringify(done)).not.toContain(v);
      expect(lines.join('')).not.toContain(v);
    }

    // The notification was signed with the account secret it names.
    const notice = received.find((r) => r.path === '/notify' && r.body.includes(done.executionId));
    expect(() => new Webhook(hook).verify(notice?.body ?? '', notice?.headers ?? {})).not.toThrow();
    expect(notice?.body).not.toContain(hook);

    // The secrets the run read show when they were last used; the one it did not read does not.
    const session = (
      await invoke(
        login,
        apiEvent({
          method: 'POST',
          path: '/api/auth/login',
          body: { email: run!.admin.email, password: PASSWORD },
          sourceIp: '198.18.0.3',
        }),
      )
    ).json.token;
    const listed = await invoke(listSecretsHandler, apiEvent({ path: '/api/secrets', headers: { authorization: `Bearer ${session}` } }));
    const used = Object.fromEntries(listed.json.items.map((s: { name: string; lastUsedAt: number | null }) => [s.name, s.lastUsedAt]));
    expect(used.API_TOKEN).toEqual(expect.any(Number));
    expect(used.PATH_KEY).toEqual(expect.any(Number));
    expect(used.UNUSED).toBeNull();
    expect(listed.body).not.toContain(token);
  });

  it('withhold the error text of a step that reads secrets: a failure that names a host taken from a secret', async () => {
    const host = `internal-${randomBytes(6).toString('hex')}.invalid`;
    const { execution, adminKey } = await givenRun(
      { steps: [{ id: 'call', type: 'http_request', url: '{% "http://" & $secrets.HOST & "/x" %}' }] },
      { HOST: host },
    );
    const done = await settled(execution);
    expect(done.status).toBe('FAILED');
    expect(done.steps[0]?.error).toEqual({
      code: 'REQUEST_FAILED',
      message: 'the request failed (details withheld: the step reads secrets)',
    });
    const text = (await apiAnswers(adminKey.token, done.executionId)).map((a) => a.body).join('\n');
    expect(text).not.toContain(host);
    expect(JSON.stringify(done)).not.toContain(host);
  });

  // The attack of issue 23: an expression transforms the secret first, so no verbatim match can catch
  // it, and lets an error carry it out to whoever may read the run.
  const SECRET = 'sk_live_Zq7xW93kPm2vLr8T';
  const transformed: [string, string, (s: string) => string[]][] = [
    ['base64', '$error($base64encode($secrets.CRM_TOKEN))', (s) => [Buffer.from(s).toString('base64')]],
    ['reversed', '$error($join($reverse($split($secrets.CRM_TOKEN, "")), ""))', (s) => [[...s].reverse().join('')]],
    ['split and joined', '$error($join($split($secrets.CRM_TOKEN, ""), "-"))', (s) => [[...s].join('-')]],
    ['substring then $number', '$number($substring($secrets.CRM_TOKEN, 3))', (s) => [s.slice(3), s.slice(3, 12)]],
    ['upper-cased', '$error($uppercase($secrets.CRM_TOKEN))', (s) => [s.toUpperCase()]],
    [
      'a DNS host built from it',
      '"https://" & $lowercase($substring($secrets.CRM_TOKEN, 8)) & ".invalid/x"',
      (s) => [s.slice(8).toLowerCase()],
    ],
  ];
  it.each(transformed)(
    'leave nothing derived from a secret %s in the run, its events, the API, the logs or the notification',
    async (_what, expr, derived) => {
      let run: Awaited<ReturnType<typeof givenRun>> | undefined;
      let done: Execution | undefined;
      let notice: Received | undefined;
      const logs = await capturedLogs(async () => {
        run = await givenRun(
          {
            steps: [{ id: 'call', type: 'http_request', url: `{% ${expr} %}` }],
            notifications: [{ url: `${base}/notify-derived`, events: ['execution.failed'], secret: whsec() }],
          },
          { CRM_TOKEN: SECRET },
        );
        done = await settled(run.execution);
        const id = run.execution.executionId;
        notice = (
          await eventually(
            async () => received.filter((r) => r.path === '/notify-derived' && r.body.includes(id)),
            (n) => n.length > 0,
          )
        )[0];
      });
      expect(done?.status).toBe('FAILED');
      const answers = (await apiAnswers(run!.memberKey.token, done!.executionId)).map((a) => a.body).join('\n');
      const everything = [answers, JSON.stringify(done), logs, notice?.body ?? ''].join('\n');
      expect(notice?.body).toContain('details withheld');
      for (const d of [SECRET, ...derived(SECRET)]) expect(everything.toLowerCase()).not.toContain(d.toLowerCase());
      expect(['EXPRESSION_FAILED', 'REQUEST_FAILED']).toContain(done?.steps[0]?.error?.code);
      expect(done?.steps[0]?.error?.message).toMatch(/\(details withheld: the step reads secrets\)$/);
    },
  );

  it('send a secret bound to hosts only there: another host fails SECRET_NOT_ALLOWED before anything is sent, and so does a redirect to one', async () => {
    const marker = randomBytes(6).toString('hex');
    const value = secretValue();
    // The URL is computed, so the save cannot judge it: the step does, before resolving or sending.
    const elsewhere = await givenRun(
      {
        steps: [
          { id: 'call', type: 'http_request', url: `{% "${base}/bound-${marker}" %}`, headers: { authorization: '{% $secrets.CRM %}' } },
        ],
      },
      { CRM: value },
      ['api.crm.example'],
    );
    const refused = await settled(elsewhere.execution);
    expect(refused.status).toBe('FAILED');
    expect(refused.steps[0]?.error?.code).toBe('SECRET_NOT_ALLOWED');
    expect(received.some((r) => r.path === `/bound-${marker}`)).toBe(false);

    // Allowed host, but it redirects (307: the body would go along) to another one: refused there.
    const redirected = await givenRun(
      {
        steps: [
          { id: 'call', type: 'http_request', method: 'POST', url: `{% "${base}/away?m=${marker}" %}`, body: { t: '{% $secrets.CRM %}' } },
        ],
      },
      { CRM: value },
      ['127.0.0.1'],
    );
    const done = await settled(redirected.execution);
    expect(received.some((r) => r.path === '/away' && r.query === `?m=${marker}`)).toBe(true);
    expect(done.steps[0]?.error?.code).toBe('SECRET_NOT_ALLOWED');
    expect(otherReceived).toEqual([]);
    expect(JSON.stringify(done)).not.toContain(value);

    // Allowed host, no redirect: sent.
    const ok = await givenRun(
      {
        steps: [
          { id: 'call', type: 'http_request', url: `{% "${base}/fine-${marker}" %}`, headers: { authorization: '{% $secrets.CRM %}' } },
        ],
      },
      { CRM: value },
      ['*.example', '127.0.0.1'],
    );
    expect((await settled(ok.execution)).status).toBe('SUCCEEDED');
    expect(received.find((r) => r.path === `/fine-${marker}`)?.headers.authorization).toBe(value);
  });

  it('fail with SECRET_NOT_FOUND naming a secret the account lacks, even when another account has it, sending nothing', async () => {
    const other = await givenAccount();
    await createSecret({ kind: 'session', accountId: other.account.accountId, userId: other.admin.userId, role: 'admin' } as never, {
      name: 'ELSEWHERE',
      value: secretValue(),
    });
    const marker = randomBytes(6).toString('hex');
    const { execution } = await givenRun(
      {
        steps: [
          {
            id: 'call',
            type: 'http_request',
            url: `${base}/never-${marker}`,
            headers: { a: '{% $secrets.PRESENT %}', b: '{% $secrets.ELSEWHERE %}' },
          },
        ],
      },
      { PRESENT: secretValue() },
    );
    const done = await settled(execution);
    expect(done.status).toBe('FAILED');
    expect(done.steps[0]).toMatchObject({ stepId: 'call', status: 'FAILED', error: { code: 'SECRET_NOT_FOUND' } });
    expect(done.steps[0]?.error?.message).toContain('ELSEWHERE');
    expect(done.steps[0]?.error?.message).not.toContain('PRESENT');
    expect(done.error?.code).toBe('SECRET_NOT_FOUND');
    expect(received.some((r) => r.path === `/never-${marker}`)).toBe(false);
  });
});
