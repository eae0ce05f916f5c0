// GET /console/approvals/{approvalId}: an approval's page.
import { route } from './approval.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { approvalPageData } from '../../../../shared/domain/approval-console.ts';
import { approvalPage } from './approval-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) =>
  approvalPage(session, await approvalPageData(session.principal, params.approvalId), Date.now()),
);
