// POST /console/channels/new: create the channel (the API's schema and domain function), or the form
// again with each error at its field.
import { route } from './create.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { createChannel } from '../../../../../shared/domain/channels.ts';
import { HTTP_STATUS } from '../../../../../shared/http-status.ts';
import { channelDraftOf, createBody, typeOf, withoutWriteOnly } from './drafts.ts';
import { channelCreatePage, channelFields } from './form-view.tsx';
import { byField, errorsOf, isRefusal } from '../../parts/labelled-field.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const draft = channelDraftOf(form, typeOf(form.get('type')));
  const fields = channelFields(draft.type);
  const body = createBody(draft);
  const shown = withoutWriteOnly(draft);
  const again = (errors: ReturnType<typeof byField>) =>
    shown.cleared ? { ...errors, form: [...errors.form, 'Write-only values are not sent back: type them again.'] } : errors;
  if (!body.ok) return channelCreatePage(session, shown.draft, again(byField(body.errors, fields)), 400);
  try {
    const c = await createChannel(session.principal, body.body);
    return seeOther(`/console/channels/${c.id}`);
  } catch (e) {
    if (!isRefusal(e)) throw e;
    const errors =
      e.code === 'CHANNEL_EXISTS' ? { fields: { name: 'a channel of this name exists in the account' }, form: [] } : errorsOf(e, fields);
    return channelCreatePage(session, shown.draft, again(errors), HTTP_STATUS[e.kind]);
  }
});
