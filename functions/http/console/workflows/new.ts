// GET /console/workflows/new: the editor, empty but for a one-step definition to start from.
import { route } from './new.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { WorkflowDefinition } from '../../../../shared/engine/definition.ts';
import { editorPage, STARTER } from './editor-view.tsx';

export const handler = consoleHttp(route, async ({ session }) =>
  editorPage(session, { name: '', text: STARTER, errors: [], definition: WorkflowDefinition.parse(JSON.parse(STARTER)) }),
);
