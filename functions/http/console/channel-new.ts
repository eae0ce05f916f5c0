// GET /console/channels/new?type=: the empty form of that kind (the first kind when none or unknown).
import { route } from './channel-new.route.ts';
import { consoleHttp } from '../../../shared/console/console-http.tsx';
import { typeOf } from './channel-drafts.ts';
import { channelCreatePage } from './channel-form-view.tsx';
import { noErrors } from './labelled-field.tsx';

export const handler = consoleHttp(route, async ({ session, query }) =>
  channelCreatePage(session, { type: typeOf(query.type), name: '' }, noErrors),
);
