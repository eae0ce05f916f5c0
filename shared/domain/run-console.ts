import { isContainerType } from '../engine/steps/index.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { listArtifacts } from '../db/entities/artifact.ts';
import { getDelivery, listExecutionDeliveries } from '../db/entities/delivery.ts';
import type { Execution } from '../db/entities/execution.ts';
import { listEvents, type RunEvent } from '../db/entities/run-events.ts';
import { getUser } from '../db/entities/user.ts';
import { currentWorkflow, runDefinition } from '../engine/versions.ts';
import { notFound } from '../errors.ts';
import { deliveryView } from './deliveries.ts';
import { requireExecution } from './executions.ts';
import { readIteration } from './run-iterations.ts';

// The console's run pages' read model: what the run page reads, in two rounds of parallel calls: the
// run, its log, artifacts and deliveries at once (each keyed by the account, so another account's run
// reads nothing of it), then its workflow and the version it runs (both cached per instance: a version
// never changes) and who started it. The log is read from its start for the timeline (at most
// TIMELINE_EVENTS events), and the page of events shown is a prefix of that read unless the page asks
// for a later one. Also the run's values page and a delivery of the run.

/** Who reads: the session's member (their own name on the page is "you"). */
export type RunReader = { accountId: string; userId: string; email: string };

/** Events of a page of the log. */
export const EVENTS_PAGE = 50;
/** The timeline is drawn from the log when it has at most this many events (else from the step states). */
export const TIMELINE_EVENTS = 1000;
/** Deliveries shown per page. */
export const DELIVERIES_PAGE = 25;

// The bindings of the v1 API's cursors: a page's "Next page" link and the API's cursors are interchangeable.
const eventsBinding = (accountId: string, executionId: string) => `events:${accountId}:${executionId}`;
const deliveriesBinding = (accountId: string, executionId: string) => `deliveries:${accountId}:${executionId}`;

/** The log from its start: the first page, and the rest up to `TIMELINE_EVENTS` (undefined: longer than that). */
async function logFromStart(accountId: string, executionId: string) {
  const first = await listEvents(accountId, executionId, EVENTS_PAGE);
  if (!first.lastKey) return { first, all: first.items };
  const rest = await listEvents(accountId, executionId, TIMELINE_EVENTS - EVENTS_PAGE, first.lastKey);
  return { first, all: rest.lastKey ? undefined : [...first.items, ...rest.items] };
}

export type RunPageData = Awaited<ReturnType<typeof readRunPage>>;

/** The run page's data (404 for an unknown run and another account's alike). */
export async function readRunPage(
  reader: RunReader,
  executionId: string,
  query: { cursor?: string | undefined; deliveriesCursor?: string | undefined; loop?: string | undefined; iteration?: number | undefined },
) {
  const { accountId } = reader;
  const eventsStart = decodeCursor(query.cursor, eventsBinding(accountId, executionId));
  const deliveriesStart = decodeCursor(query.deliveriesCursor, deliveriesBinding(accountId, executionId));
  const [execution, log, later, artifacts, deliveries] = await Promise.all([
    requireExecution(accountId, executionId),
    logFromStart(accountId, executionId),
    eventsStart ? listEvents(accountId, executionId, EVENTS_PAGE, eventsStart) : undefined,
    listArtifacts(accountId, executionId),
    listExecutionDeliveries(accountId, executionId, DELIVERIES_PAGE, deliveriesStart),
  ]);
  const events = later ?? log.first;
  const cancel = cancelOf(execution, log.all);
  // The iteration asked for (1-based in the address; the run's first loop unless named): from the log read, or one filtered Query.
  const loopId = query.loop ?? execution.steps.find((s) => isContainerType(s.type))?.stepId;
  const [workflow, definition, starter, canceller, iteration] = await Promise.all([
    currentWorkflow(accountId, execution.workflowId),
    runDefinition(execution),
    startedByOf(reader, execution),
    cancel?.kind === 'user' ? userOf(reader, cancel.id) : undefined,
    query.iteration !== undefined && loopId !== undefined ? readIteration(execution, loopId, query.iteration - 1, log.all) : undefined,
  ]);
  return {
    execution,
    workflowName: workflow?.name,
    definition,
    startedBy: starter,
    /** Who cancelled the run (a person, by email when still a member, or an API key), and why. */
    cancelledBy: cancel ? { ...cancel, ...(canceller?.email ? { email: canceller.email } : {}) } : undefined,
    /** The iteration of a `for_each` the page asked for (`?loop=&iteration=`). */
    iteration,
    /** The whole log, oldest first, when it has at most TIMELINE_EVENTS events. */
    log: log.all,
    /** Who retried the run last (its log's last `execution.retried`), when the log was read whole. */
    retriedBy: retriedBy(reader, log.all),
    /** The inputs as given (`execution.started`), when the log still has it. */
    inputs: inputsOf(log.first.items),
    events: { items: events.items, nextCursor: encodeCursor(events.lastKey, eventsBinding(accountId, executionId)) },
    artifacts,
    deliveries: {
      items: deliveries.items.map(deliveryView),
      nextCursor: encodeCursor(deliveries.lastKey, deliveriesBinding(accountId, executionId)),
    },
  };
}

/** The variables the run was started with (its first event's), if the log has it. */
export function inputsOf(events: readonly RunEvent[]): Record<string, unknown> | undefined {
  const started = events[0];
  const input = started?.type === 'execution.started' ? started.data.input : undefined;
  return input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : undefined;
}

/** Who retried the run last: "you", or the user's id (the log keeps ids, not emails). */
function retriedBy(reader: RunReader, log: readonly RunEvent[] | undefined): string | undefined {
  const by = log?.findLast((ev) => ev.type === 'execution.retried')?.data.by;
  if (typeof by !== 'string') return undefined;
  return by === reader.userId ? `you (${reader.email})` : `user ${by}`;
}

/** Who cancelled a CANCELLED run: its log's `execution.cancelled` (`by`: a user, `key`: an API key), else the run's own record of the ask. */
function cancelOf(e: Execution, log: readonly RunEvent[] | undefined) {
  if (e.status !== 'CANCELLED') return undefined;
  const d = log?.findLast((ev) => ev.type === 'execution.cancelled')?.data;
  const by = typeof d?.by === 'string' ? d.by : e.cancelBy;
  const key = typeof d?.key === 'string' ? d.key : e.cancelKey;
  const reason = (typeof d?.reason === 'string' ? d.reason : undefined) ?? e.cancelReason;
  const extra = reason ? { reason } : {};
  if (by) return { kind: 'user' as const, id: by, ...extra };
  if (key) return { kind: 'key' as const, id: key, ...extra };
  return undefined;
}

/** A user of the reader's account by id: the reader themself without a read. */
async function userOf(reader: RunReader, userId: string): Promise<{ email?: string }> {
  if (userId === reader.userId) return { email: reader.email };
  const user = await getUser(reader.accountId, userId);
  return user ? { email: user.email } : {};
}

/** The user who started the run (a rerun, a retry's run, a run started from the console), by email when still a member. */
async function startedByOf(reader: RunReader, e: Execution): Promise<{ userId: string; email?: string } | undefined> {
  if (!e.startedBy) return undefined;
  if (e.startedBy === reader.userId) return { userId: e.startedBy, email: reader.email };
  const user = await getUser(reader.accountId, e.startedBy);
  return { userId: e.startedBy, ...(user ? { email: user.email } : {}) };
}

/** One of the run's values in full: its inputs (from its log's first event), variables or output; undefined when it has none. */
export async function readRunValue(accountId: string, executionId: string, part: 'inputs' | 'variables' | 'output') {
  const [e, first] = await Promise.all([
    requireExecution(accountId, executionId),
    part === 'inputs' ? listEvents(accountId, executionId, 1) : undefined,
  ]);
  return part === 'inputs' ? inputsOf(first?.items ?? []) : part === 'variables' ? e.variables : e.output;
}

/** A delivery of the run (404 for another run's, another account's and an unknown id alike). */
export async function requireRunDelivery(accountId: string, executionId: string, deliveryId: string) {
  const d = await getDelivery(accountId, deliveryId);
  if (d?.executionId !== executionId) throw notFound('DELIVERY_NOT_FOUND', `Delivery ${deliveryId} does not exist.`);
  return d;
}
