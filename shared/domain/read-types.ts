// The records the console's pages show, as the domain names them: its loaders and views import these
// from here, never from shared/db/ (test/unit/structure.test.ts). Types and the lists of kinds only:
// reads go through the domain's read models (run-console.ts, workflow-console.ts, approval-console.ts, …).
export type { Approval, AuditRecord } from '../db/entities/approval.ts';
export type { Artifact } from '../db/entities/artifact.ts';
export type { AuditEntry } from '../db/entities/audit.ts';
export { CHANNEL_TYPES, type ChannelType } from '../db/channel-types.ts';
export { currentStepId, type Execution } from '../db/entities/execution.ts';
export type { RunRow } from '../db/entities/execution-rows.ts';
export {
  ExecutionStatus,
  IN_PROGRESS,
  type NestedStepState,
  type RunError,
  type StepState,
  TERMINAL,
} from '../db/entities/execution-state.ts';
export type { RunEvent } from '../db/entities/run-events.ts';
export type { SignatureScheme } from '../db/entities/webhook.ts';
export type { Workflow } from '../db/entities/workflow.ts';
export type { WorkflowName } from '../db/entities/workflow-names.ts';
