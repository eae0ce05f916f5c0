import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/schedules/preview',
  handler: CONSOLE_FUNCTIONS.read,
  summary:
    "The next five fire times of a schedule being typed (an HTML fragment: the form's live preview); 400 with the reasons when there are none",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  // As the form sends them; other fields of the form are ignored.
  query: z.object({
    expression: z.string().max(256).default(''),
    timezone: z.string().max(64).default('UTC'),
    startAt: z.string().max(32).default(''),
    endAt: z.string().max(32).default(''),
  }),
} as const satisfies Route;
