// GET /console/runs/{executionId}/artifacts/{artifactId}: to the artifact's presigned download (5 minutes), made as the link is followed.
import { route } from './artifact.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../shared/console/render.tsx';
import { artifactDownload } from '../../../../shared/domain/executions.ts';

export const handler = consoleHttp(route, async ({ session, params }) =>
  seeOther((await artifactDownload(session.principal.accountId, params.executionId, params.artifactId)).url),
);
