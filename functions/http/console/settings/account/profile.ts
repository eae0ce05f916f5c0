// POST /console/account/profile: my Slack user id (empty removes it). Refused (invalid, or another
// member's): the account page again with the error at the field; nothing changed.
import { route } from './profile.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { updateProfile } from '../../../../../shared/domain/members.ts';
import { AppError } from '../../../../../shared/errors.ts';
import { fieldErrors } from '../../../../../shared/http/middleware/parse-request.ts';
import { UpdateProfileBody } from '../../../../../shared/schemas/identity.ts';
import { renderAccount } from './account-data.ts';
import { errorsOf } from '../../parts/people-fields.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const input = { slackUserId: (form.get('slackUserId') ?? '').trim().slice(0, 1000) };
  const parsed = UpdateProfileBody.safeParse({ slackUserId: input.slackUserId === '' ? null : input.slackUserId });
  const refused = (errors: Record<string, string>, status: number) => renderAccount(session, { profile: { input, errors }, status });
  if (!parsed.success) return refused(errorsOf(fieldErrors(parsed.error)), 400);
  try {
    await updateProfile(session.principal, parsed.data);
  } catch (e) {
    if (e instanceof AppError && e.code === 'SLACK_USER_TAKEN') return refused({ slackUserId: e.message }, 409);
    throw e;
  }
  return seeOther('/console/account?saved=profile');
});
