// GET /console/schedules/preview: the "Next fire times" section for the values typed so far (htmx
// swaps it into the form as you type); the same computation as the form's "Preview" button.
import { route } from './preview.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { CONSOLE_HEADERS } from '../../../../shared/console/render.tsx';
import { emptyDraft, previewFragment } from './form-view.tsx';
import { previewOf } from './drafts.ts';

export const handler = consoleHttp(route, async ({ query }) => {
  const preview = previewOf({ ...emptyDraft(), ...query, expression: query.expression.trim(), timezone: query.timezone.trim() });
  return {
    statusCode: preview.ok ? 200 : 400,
    headers: { ...CONSOLE_HEADERS },
    body: previewFragment(preview),
  };
});
