import type { Execution } from '../db/entities/execution.ts';
import { IN_PROGRESS, type RecordedReport, type RunError } from '../db/entities/execution-state.ts';
import { newEvent, type RunEvent } from '../db/entities/run-events.ts';
import type { HttpRequestInput, HttpRequestResult } from '../egress/http.ts';
import { newId } from '../ids.ts';
import { recordedDecision } from './decisions.ts';
import { MAX_STEP_EXECUTIONS, type WorkflowDefinition } from './definition.ts';
import { executeSteps } from './execute.ts';
import { iterationOf, locate, stateAt } from './flow.ts';
import { Pace } from './pace.ts';
import { HeldRun } from './session.ts';
import { retryInProgress } from './step-retry.ts';
import type { HttpMock } from './steps/http-request.ts';
import type { Step, NestedStep } from './steps/index.ts';
import type { ApprovalMock, ManualApprovalStep } from './steps/manual-approval.ts';
import type { CallbackMock, WaitForCallbackStep } from './steps/wait-for-callback.ts';
import { TestTrace, type TestStep } from './test-trace.ts';

/**
 * Test runs (docs/workflows-as-code.md "Test runs"): a workflow executed on the real step loop, in
 * memory, with its effects answered from mocks. It is an unwritten run (`HeldRun.unwritten`) that
 * never needs writing: what would wait (an approval, a callback, a delay, a retry's backoff) is
 * answered at once, and nothing leaves the process: no item is written, no request sent (an
 * http_request's answer is its mock), no notification or queue message, no object stored (an
 * artifact's content is evaluated and dropped), no secret read (`$secrets.NAME` is a placeholder).
 * A step with an effect and no mock ends the test run FAILED with `MOCK_MISSING`, naming the step.
 */

/** Per step id: one answer for every time the step runs, or a list taken in order (an attempt, an iteration each). */
export type TestMocks = Record<string, HttpMock | ApprovalMock | CallbackMock | (HttpMock | ApprovalMock | CallbackMock)[]>;
/** The values an approval's form takes from a mocked approve (the approvals' own checks); throws when they do not fit. */
export type FormCheck = (stepId: string, form: unknown, submitted: Record<string, unknown>) => Record<string, unknown>;

export type TestResult = {
  status: 'SUCCEEDED' | 'FAILED';
  output: unknown;
  error: RunError | null;
  path: string[];
  steps: TestStep[];
  /** Time the run would have waited (delays, retry backoffs), planned in memory: none of it slept. */
  waitedSeconds: number;
};

/** What a test run may spend, as an inline run's share (`INLINE_SHARE`) but for a run that waits for nothing real. */
export const TEST_SHARE = { steps: MAX_STEP_EXECUTIONS, ms: 5_000 };
/** The step loop's "time left" for a test run's steps: every step's budget fits (its mocks take none). */
const TEST_TIME_MS = 60_000;

/**
 * A missing mock. Not an `Error`: the step loop turns an Error a step with a retry policy throws into a
 * storage failure its policy may retry (`storageFailure`); this ends the test run, never a step.
 */
class MissingMock {
  constructor(readonly message: string) {}
}

class TestRun extends HeldRun {
  readonly trace = new TestTrace();
  waitedMs = 0;
  /** The step loop handed the run on without a time: the test run's share is spent. */
  outOfShare = false;
  private used = new Map<string, number>();
  private sent = new Map<string, HttpRequestInput>();
  private reports = new Map<string, Awaited<ReturnType<HeldRun['reported']>>>();

  constructor(
    e: Execution,
    definition: WorkflowDefinition,
    private readonly mocks: TestMocks,
  ) {
    super(e, definition, '', true);
    this.io = {
      // No secret is read: each reference evaluates to a placeholder naming it.
      readSecrets: async (_account, names) => ({
        values: Object.fromEntries(names.map((n) => [n, `{secret ${n}}`])),
        hosts: {},
        missing: [],
      }),
      request: async (input) => {
        const { step } = this.here();
        this.sent.set(step.id, input);
        return this.answer<HttpMock>(step) satisfies HttpRequestResult;
      },
      putObject: async () => undefined,
      failCallback: async () => undefined,
    };
  }

  here() {
    const here = locate(this);
    if (!here) throw new Error('a test run asked for a mock past its last step');
    return here;
  }

  /** The step's next mocked answer. */
  answer<T>({ id, type: kind }: Step | NestedStep): T {
    const mock = this.mocks[id];
    if (mock === undefined)
      throw new MissingMock(`Step ${id} (${kind}) has no mock: a test run sends nothing and waits for no one. Add mocks.${id}.`);
    if (!Array.isArray(mock)) return mock as T;
    const n = this.used.get(id) ?? 0;
    const next = mock[n];
    if (next === undefined) throw new MissingMock(`Step ${id} (${kind}) needs answer ${n + 1}; its mock lists ${mock.length}.`);
    this.used.set(id, n + 1);
    return next as T;
  }

  private see(events: readonly RunEvent[]) {
    const inputOf = (id: string) => {
      const sent = this.sent.get(id);
      this.sent.delete(id);
      return sent ?? null;
    };
    for (const ev of events) {
      // A retry's backoff, as planned (the step loop then pauses for it or hands the run on: `pause`, `release`).
      if (ev.type === 'step.retrying') this.waitedMs += Number(ev.data.delaySeconds) * 1000;
      this.trace.see(ev, inputOf, (id) => this.e.outputs[id]);
    }
  }

  override record(events: RunEvent[]) {
    this.see(events);
  }
  override append(events: RunEvent[]) {
    this.see(events);
  }
  override async flush() {
    return true;
  }
  override async letGo(fields: Partial<Execution>) {
    this.update(fields);
    // Not held: a callback's request is never sent.
    return false;
  }
  override async release(until?: number) {
    if (until === undefined) {
      this.outOfShare = true;
      return;
    }
    // A sleep (a delay) from its step's start; a retry's backoff was counted as it was planned.
    const here = locate(this);
    const state = here && stateAt(this, here);
    if (state && !retryInProgress(state)) this.waitedMs += until - (state.startedAt ?? until);
  }
  override async end(fields: Partial<Execution>) {
    this.update(fields);
    return false;
  }
  override async notify() {}
  /** A retry's short backoff: counted as it was planned (`step.retrying`), not slept. */
  override async pause() {}
  override async reported(r: RecordedReport) {
    const got = this.reports.get(r.callbackId);
    if (!got) throw new Error(`no mocked report for callback ${r.callbackId}`);
    return got;
  }

  /** Answer the wait the run stopped at from its mock, in memory: the step loop then applies it as a worker would. */
  answerWait(checkForm: FormCheck) {
    const now = Date.now();
    const { status, executionId } = this.e;
    if (status === 'WAITING_APPROVAL') {
      const step = this.here().step as ManualApprovalStep;
      const mock = this.answer<ApprovalMock>(step);
      const form = this.trace.last(step.id)?.input as { form?: unknown } | undefined;
      const formData = mock.decision === 'approve' ? checkForm(step.id, form?.form ?? null, mock.form ?? {}) : undefined;
      const approval = { approvalId: this.e.approvalId ?? '', executionId, stepId: step.id, onReject: step.onReject };
      const d = { decision: mock.decision, comment: mock.comment, decidedBy: 'test', formData };
      this.update({ status: 'RUNNING', decision: recordedDecision(approval, d, { now }) });
      this.drop('approvalId');
    } else if (status === 'WAITING_CALLBACK') {
      const step = this.here().step as WaitForCallbackStep;
      const mock = this.answer<CallbackMock>(step);
      const callbackId = this.e.callbackId ?? '';
      this.reports.set(callbackId, reportOf(step, callbackId, mock));
      const outcome = mock.status;
      const data = { callbackId, stepId: step.id, status: outcome === 'timeout' ? 'timeout' : outcome };
      const event = newEvent(executionId, outcome === 'timeout' ? 'callback.expired' : 'callback.reported', data, now);
      this.update({ status: 'RUNNING', report: { callbackId, stepId: step.id, at: now, outcome, event } });
      this.drop('callbackId');
    } else if (this.e.wakeAt !== undefined) this.drop('wakeAt');
    else throw new Error(`a test run stopped ${status} with nothing to answer`);
  }

  /** The test run ends FAILED at the step it is in. */
  stop(error: RunError, sent?: HttpRequestInput) {
    const here = locate(this);
    if (here) this.trace.stopAt(here.step.id, iterationOf(this, here).iteration, sent ?? this.sent.get(here.step.id) ?? null, error);
    this.update({ status: 'FAILED', error });
  }
}

/** What a mocked report gives the step, as `reportedOutcome` reads it off a real callback. */
function reportOf(step: WaitForCallbackStep, callbackId: string, mock: CallbackMock) {
  if (mock.status === 'success') return { output: { callbackId, status: 'success', output: mock.output ?? {} } };
  if (mock.status === 'failure') return { error: mock.error };
  if (step.onTimeout === 'continue') return { output: { callbackId, status: 'timed_out', output: null } };
  return { error: { code: 'CALLBACK_TIMED_OUT', message: `Step ${step.id} was not reported before its deadline.` } };
}

/** A run to test, as a start would make it (not written): `variables` already checked against the definition. */
export function testExecution(
  w: { accountId: string; workflowId: string; version: number },
  definition: WorkflowDefinition,
  variables: Record<string, unknown>,
): Execution {
  const now = Date.now();
  return {
    executionId: newId('ex'),
    accountId: w.accountId,
    workflowId: w.workflowId,
    workflowVersion: w.version,
    trigger: 'api',
    status: 'RUNNING',
    recovery: false,
    variables,
    outputs: {},
    steps: definition.steps.map((s) => ({ stepId: s.id, type: s.type, status: 'PENDING' as const })),
    nextStep: 0,
    startedAt: now,
    updatedAt: now,
    seq: 0,
  };
}

/** Execute `e` to its end with `mocks` answering its effects and waits; its trace. */
export async function runTest(e: Execution, definition: WorkflowDefinition, mocks: TestMocks, checkForm: FormCheck): Promise<TestResult> {
  const run = new TestRun(e, definition, mocks);
  const pace = new Pace(TEST_SHARE);
  try {
    for (;;) {
      await executeSteps(run, () => TEST_TIME_MS, pace);
      if (!IN_PROGRESS.includes(run.e.status)) break;
      if (run.outOfShare) {
        const { steps, ms } = TEST_SHARE;
        run.stop({ code: 'TEST_RUN_TOO_LONG', message: `The test run took more than ${ms} ms or ${steps} steps.` });
        break;
      }
      run.answerWait(checkForm);
    }
  } catch (err) {
    if (!(err instanceof MissingMock)) throw err;
    run.stop({ code: 'MOCK_MISSING', message: err.message });
  }
  const { status, output, error } = run.e;
  return {
    status: status === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED',
    output: status === 'SUCCEEDED' ? (output ?? null) : null,
    error: error ?? null,
    path: run.trace.path,
    steps: run.trace.steps,
    waitedSeconds: run.waitedMs / 1000,
  };
}
