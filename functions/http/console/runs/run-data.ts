// What the run page reads, in two rounds of parallel calls: the run, its log, artifacts and
// deliveries at once (each keyed by the account, so another account's run reads nothing of it), then
// its workflow and the version it runs (both cached per instance: a version never changes) and who
// started it. The log is read from its start for the timeline (at most TIMELINE_EVENTS events), and
// the page of events shown is a prefix of that read unless the page asks for a later one.
import { decodeCursor, encodeCursor } from '../../../../shared/db/cursor.ts';
import { listArtifacts } from '../../../../shared/db/entities/artifact.ts';
import { listExecutionDeliveries } from '../../../../shared/db/entities/delivery.ts';
import type { Execution } from '../../../../shared/db/entities/execution.ts';
import { listEvents, type RunEvent } from '../../../../shared/db/entities/run-events.ts';
import { getUser } from '../../../../shared/db/entities/user.ts';
import { deliveryView } from '../../../../shared/domain/deliveries.ts';
import { requireExecution } from '../../../../shared/domain/executions.ts';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { currentWorkflow, runDefinition } from '../../../../shared/engine/versions.ts';

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

export type RunPage = Awaited<ReturnType<typeof loadRun>>;

export async function loadRun(
  session: ConsoleSession,
  executionId: string,
  query: { cursor?: string | undefined; deliveriesCursor?: string | undefined },
) {
  const { accountId } = session.principal;
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
  const [workflow, definition, starter] = await Promise.all([
    currentWorkflow(accountId, execution.workflowId),
    runDefinition(execution),
    startedByOf(session, execution),
  ]);
  return {
    execution,
    workflowName: workflow?.name,
    definition,
    startedBy: starter,
    /** The whole log, oldest first, when it has at most TIMELINE_EVENTS events. */
    log: log.all,
    /** Who retried the run last (its log's last `execution.retried`), when the log was read whole. */
    retriedBy: retriedBy(session, log.all),
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
function retriedBy(session: ConsoleSession, log: readonly RunEvent[] | undefined): string | undefined {
  const by = log?.findLast((ev) => ev.type === 'execution.retried')?.data.by;
  if (typeof by !== 'string') return undefined;
  return by === session.principal.userId ? `you (${session.email})` : `user ${by}`;
}

/** The user who started the run (a rerun, a retry's run, a run started from the console), by email when still a member. */
async function startedByOf(session: ConsoleSession, e: Execution): Promise<{ userId: string; email?: string } | undefined> {
  if (!e.startedBy) return undefined;
  if (e.startedBy === session.principal.userId) return { userId: e.startedBy, email: session.email };
  const user = await getUser(session.principal.accountId, e.startedBy);
  return { userId: e.startedBy, ...(user ? { email: user.email } : {}) };
}
