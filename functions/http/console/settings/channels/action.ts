// POST /console/channels/{channelId}/edit|test|delete: the API's update (masks sent back keep the
// stored values), test (the provider's answer on the channel's page) and delete.
import { route } from './action.route.ts';
import { channelKinds } from '../../../../../shared/channels/index.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { recentChannelDeliveries } from '../../../../../shared/domain/channel-console.ts';
import { removeChannel, showChannel, testChannel, updateChannel } from '../../../../../shared/domain/channels.ts';
import { HTTP_STATUS } from '../../../../../shared/http-status.ts';
import { channelDraftOf, updateBody, withoutWriteOnly } from './drafts.ts';
import { channelFields } from './form-view.tsx';
import type { ChannelView } from './list-view.tsx';
import { channelPage } from './channel-view.tsx';
import { byField, errorsOf, isRefusal } from '../../parts/labelled-field.tsx';

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  const p = session.principal;
  const c = (await showChannel(p, params.channelId)) as ChannelView;
  if (params.action === 'delete') {
    await removeChannel(p, c.id);
    return seeOther('/console/channels');
  }
  const deliveries = () => recentChannelDeliveries(p, c.id);
  if (params.action === 'test') {
    const to = (form.get('to') ?? '').trim().slice(0, 254);
    const result = await testChannel(p, c.id, to || undefined);
    return channelPage(session, c, { deliveries: await deliveries(), result, to });
  }
  const draft = channelDraftOf(form, c.type);
  const fields = channelFields(c.type);
  const body = updateBody(draft, (f) => channelKinds[c.type].settings[f] === false);
  const shown = withoutWriteOnly(draft);
  const refused = async (status: number, errors: ReturnType<typeof byField>) =>
    channelPage(session, c, {
      deliveries: await deliveries(),
      draft: shown.draft,
      errors: shown.cleared ? { ...errors, form: [...errors.form, 'Write-only values are not sent back: type them again.'] } : errors,
      status,
    });
  if (!body.ok) return refused(400, byField(body.errors, fields));
  try {
    await updateChannel(p, c.id, body.body);
  } catch (e) {
    if (!isRefusal(e) || e.kind === 'not_found') throw e;
    return refused(HTTP_STATUS[e.kind], errorsOf(e, fields));
  }
  return seeOther(`/console/channels/${c.id}`);
});
