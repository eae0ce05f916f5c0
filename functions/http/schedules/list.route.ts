import type { Route } from '../../../shared/http/route.ts';
import { WorkflowParams } from '../../../shared/schemas/engine.ts';
import { ScheduleList } from '../../../shared/schemas/schedules.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/workflows/{id}/schedules',
  handler: 'http/schedules/list',
  summary: "List a workflow's schedules",
  tag: 'Schedules',
  auth: session,
  grants: read,
  params: WorkflowParams,
  response: ScheduleList,
} as const satisfies Route;
