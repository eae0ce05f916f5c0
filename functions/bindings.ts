import { type Grant, type Setting, settingsFor } from '../shared/config.ts';

/** The sweeps move runs, so they write the table and emit events; the crash sweep also queues runs it resumes. */
const sweeps = ['table:read', 'table:write', 'queue:send'] as const satisfies readonly Grant[];

/**
 * The functions that are not routes (a route's come from its entry in the route table): what the
 * CDK stack grants each, and the settings it reads beyond those its grants give it. Each checks its
 * settings at import (`requireConfig(settingsOf(...))`), the stack sets them.
 */
export const WORKERS = {
  /** Runs execute steps (artifacts go to the bucket), build approval links and open the account secrets their steps read. */
  'worker/execute': {
    grants: ['table:read', 'table:write', 'queue:send', 'bucket:write', 'secrets:decrypt'],
    settings: ['PUBLIC_BASE_URL'],
  },
  /**
   * A notification reads its run's definition snapshot (and the account secret that signs it); the
   * worker only delays its own messages, and updates its delivery log (one UpdateItem per attempt).
   * Approval messages: it opens the channel's secrets, sends mail, builds reviewers' links
   * (shared/domain/review-links.ts, on PUBLIC_BASE_URL) and records where each message went (to update it).
   */
  'worker/notify': {
    grants: ['table:read', 'table:log', 'queue:requeue', 'secrets:decrypt', 'email:send', 'links:sign'],
    settings: ['NOTIFY_QUEUE_URL', 'PUBLIC_BASE_URL'],
  },
  /** The scheduled sweep also repairs schedule drift (timers without items and the reverse). */
  'sweep/scheduled': { grants: [...sweeps, 'schedules:manage'], settings: [] },
  'sweep/startup': { grants: sweeps, settings: [] },
  /**
   * EventBridge Scheduler's target: one schedule fire starts a run as the v1 start does. It also deletes
   * the timers of gone or finished schedules: the stack grants DeleteSchedule in the group and sets
   * SCHEDULE_GROUP by hand (`schedules:manage` would hand the function its own ARN, a cycle).
   */
  'schedule/fire': { grants: ['table:read', 'table:write', 'queue:send'], settings: [] },
  /**
   * The table stream's consumer on AWS: new audit entries onto the default EventBridge bus. It reads
   * the stream records it is given, never the table; the stack grants the stream and events:PutEvents.
   */
  'worker/audit-events': { grants: [], settings: [] },
  /**
   * The stack's workflows (a custom resource, only with the `workflowsDir` context): applies a folder of
   * workflow files to one account; a pruned workflow's schedules go with it, timers included.
   */
  'code/apply': { grants: ['table:read', 'table:write', 'schedules:manage'], settings: [] },
} as const satisfies Record<string, { grants: readonly Grant[]; settings: readonly Setting[] }>;

export type Worker = keyof typeof WORKERS;

/** Every setting a worker or sweep needs: its grants' and its own. */
export const workerSettings = (w: Worker) => settingsFor(WORKERS[w].grants, WORKERS[w].settings);
