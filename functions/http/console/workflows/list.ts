// GET /console/workflows: the account's workflows, newest first, a cursor page at a time.
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { pageWorkflows } from '../../../../shared/domain/workflows.ts';
import { WORKFLOWS_PAGE, workflowsPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const page = await pageWorkflows(session.principal.accountId, WORKFLOWS_PAGE, query.cursor);
  return workflowsPage(session, page.items, query, page.nextCursor);
});
