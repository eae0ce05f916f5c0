// GET /console/channels/new?type=: the empty form of that kind (the first kind when none or unknown).
import { route } from './new.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { typeOf } from './drafts.ts';
import { channelCreatePage } from './form-view.tsx';
import { noErrors } from '../../parts/labelled-field.tsx';

export const handler = consoleHttp(route, async ({ session, query }) =>
  channelCreatePage(session, { type: typeOf(query.type), name: '' }, noErrors),
);
