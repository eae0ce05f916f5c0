import type * as z from 'zod';
import type { Callback } from '../../db/entities/callback.ts';
import type { Execution } from '../../db/entities/execution.ts';
import type { RunError } from '../../db/entities/execution-state.ts';
import type { HttpRequestInput, HttpRequestOptions, HttpRequestResult } from '../../egress/http.ts';
import type { EventType } from '../../db/event-types.ts';
import type { Scope as ExpressionScope } from '../expressions.ts';
import { StepError } from '../../step-error.ts';

/**
 * What a step module is (`./index.ts` lists them) and what it gives the step loop (`../execute.ts`):
 * the types every step module imports, so none imports the loop or the registry.
 */

export type Scope = ExpressionScope;
/** Where a step inside a `for_each` runs: its loop step, the iteration and its item. */
export type LoopContext = { stepId: string; iteration: number; item: unknown };
/**
 * What a step may do outside the run, given by the step loop (../step-io.ts): the step modules import
 * none of it, so the definition schema, which reads them, bundles no object store, key service or
 * queue client.
 */
export type StepIO = {
  /** The account's secrets a step reads, by name (shared/domain/account-secrets.ts). */
  readSecrets: (
    accountId: string,
    names: readonly string[],
    now: number,
  ) => Promise<{ values: Record<string, string>; hosts: Record<string, string[]>; missing: string[] }>;
  /** One outgoing request through the egress checks (shared/egress/http.ts). */
  request: (input: HttpRequestInput, opts: HttpRequestOptions) => Promise<HttpRequestResult>;
  /** Store an object in the artifacts bucket. */
  putObject: (key: string, body: Buffer, contentType: string, signal: AbortSignal) => Promise<void>;
  /** Decide a pending callback as failed (../callbacks.ts `settleCallback`). */
  failCallback: (c: Callback, error: RunError, now: number) => Promise<unknown>;
};

/** `maxMs`: what is left of the invocation for this step (an http_request's timeout is capped by it). */
export type StepContext = {
  execution: Execution;
  scope: Scope;
  signal: AbortSignal;
  now: number;
  io: StepIO;
  maxMs?: number;
  loop?: LoopContext;
};

/**
 * A wait (for people, for a machine): the run is let go in `status` with `update` (the id of what it
 * waits for), its `event` recorded after `step.started`, and `items` (numbered after that event:
 * `runSeq`) written with it; `after` runs once the wait is written (a callback's request).
 */
export type Wait = {
  kind: 'wait';
  status: 'WAITING_APPROVAL' | 'WAITING_CALLBACK';
  update: Partial<Execution>;
  event: { type: EventType; data: Record<string, unknown> };
  items: (runSeq: number | undefined) => object[];
  after?: (e: Execution, maxMs: number) => Promise<void>;
};

/** What a step did; the worker turns it into one checkpoint. */
export type Outcome =
  | {
      kind: 'done';
      output?: unknown;
      variables?: Record<string, unknown>;
      items?: object[];
      /** A jump (a `switch`'s choice): the step to go to, and the case that named it. */
      next?: string;
      branch?: { case: number | 'default'; next: string };
    }
  /** A container step entered: its nested steps run once per item (`../flow.ts`). */
  | { kind: 'loop'; items: unknown[] }
  | { kind: 'skipped' }
  | { kind: 'failed'; error: RunError; output?: unknown; continueRun: boolean; variables?: Record<string, unknown> }
  | { kind: 'fail-run'; error: RunError }
  | Wait
  /** Hand-off: the run sleeps (no worker) until `until`, then the step ends (`sleeps`). */
  | { kind: 'sleep'; until: number };

export type Issue = { path: (string | number)[]; message: string };
type Raw = Record<string, unknown>;

/** Everything about one step type but its schema (`LeafStepModule`, `ContainerStepModule`). */
export type StepFacts<S> = {
  type: string;
  /** Its effect lives outside the run (a request sent, an object stored): the run's progress is written before it. */
  externalEffect: boolean;
  /** The longest it may take (a step starts only when this fits in what is left of the invocation). */
  budgetMs: (step: S) => number;
  /** What it does. Returns its outcome; a step fault is a `failed` outcome (`stepFault`), never thrown. */
  run: (step: S, ctx: StepContext) => Promise<Outcome>;
  /** A cancel asked for while it runs aborts it (a long request). */
  abortsOnCancel?: boolean;
  /**
   * It changes nothing but the run and waits for nothing (no request, no object stored, no person, no
   * time): a run made only of such steps may run to its end where it starts (`../inline.ts`).
   */
  inline?: boolean;
  /**
   * What a test run (../test-run.ts) takes in place of its effect or its wait, per step id in `mocks`
   * (one answer, or a list taken in order); a step without one takes none.
   */
  mock?: z.ZodType;
  /** Its `sleep` holds the step RUNNING until the run's wake, which ends it. */
  sleeps?: boolean;
  /** It never goes on: when it runs, the run ends (a `fail`). */
  endsRun?: boolean;
  /** It can make the run execute steps more than once or out of order (a jump, a loop): the run counts its steps. */
  movesRun?: boolean;
  /** It asks people (reviewers, notified on the account's channels). */
  asksPeople?: boolean;
  /**
   * Where the outgoing request it sends sits in the step (`[]`: the step itself): its `url`, `headers`
   * and `body` are the only step fields that may read `$secrets`, and its headers are masked in views.
   */
  request?: readonly string[];
  /** Targets it names besides `next` and `onError.next` (a switch's cases), on the raw value. */
  targets?: (step: Raw) => { target: unknown; path: (string | number)[] }[];
  /** Save-time checks of the raw value that need the whole step (paths below the step). */
  issues?: (step: Raw) => Issue[];
};

/** A step type whose schema is complete. */
export type LeafStepModule<T extends string, Schema extends z.ZodType<{ type: T; id: string }>> = StepFacts<z.infer<Schema>> & {
  type: T;
  schema: Schema;
};

/** A step type that holds steps (`steps`: any leaf type), run once per item: the registry completes its schema. */
export type ContainerStepModule<T extends string, Fields extends z.ZodRawShape, S> = StepFacts<S> & { type: T; fields: Fields };

/** The text of a value (a string as is, anything else as JSON). */
export const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * A step's `run` with its faults as outcomes: a `StepError` (an expression that failed, a refused
 * request, a bad value) becomes `failed` (its `onError` decides); anything else is a worker fault, thrown.
 */
export const stepFault =
  <S>(run: (step: S, ctx: StepContext) => Promise<Outcome> | Outcome) =>
  async (step: S, ctx: StepContext): Promise<Outcome> => {
    try {
      return await run(step, ctx);
    } catch (err) {
      if (!(err instanceof StepError)) throw err;
      return { kind: 'failed', error: { code: err.code, message: err.message }, continueRun: false };
    }
  };
