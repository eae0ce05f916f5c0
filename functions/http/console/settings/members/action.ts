// POST /console/members/{id}/{action} (admins): the confirmed change, as PUT/DELETE /api/members/{id}
// do it, then back to the members (303). The domain's refusals (the last admin cannot be removed,
// demoted or disabled; a concurrent change) answer the confirmation page again with its message
// beside the button (409); an invalid role, at the Role field (400). A refused form changes nothing.
import { route } from './action.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { memberFor, removeMember, updateMember } from '../../../../../shared/domain/members.ts';
import { AppError } from '../../../../../shared/errors.ts';
import { fieldErrors } from '../../../../../shared/http/middleware/parse-request.ts';
import { UpdateMemberBody } from '../../../../../shared/schemas/identity.ts';
import { memberActionPage } from './action-view.tsx';
import { errorsOf } from '../../parts/people-fields.tsx';

const REFUSALS = new Set(['LAST_ADMIN', 'MEMBER_CHANGED']);

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  const p = session.principal;
  const member = await memberFor(p, params.id);
  const role = (form.get('role') ?? '').slice(0, 100);
  const change =
    params.action === 'role'
      ? { role }
      : params.action === 'disable'
        ? { disabled: true }
        : params.action === 'enable'
          ? { disabled: false, ...(form.get('restoreKeys') === 'true' ? { restoreKeys: true } : {}) }
          : undefined;
  try {
    if (change === undefined) await removeMember(p, params.id);
    else {
      const parsed = UpdateMemberBody.safeParse(change);
      if (!parsed.success)
        return memberActionPage(session, member, params.action, { errors: errorsOf(fieldErrors(parsed.error)), role, status: 400 });
      await updateMember(p, params.id, parsed.data);
    }
  } catch (e) {
    if (e instanceof AppError && REFUSALS.has(e.code))
      return memberActionPage(session, member, params.action, { refusal: e.message, role, status: 409 });
    throw e;
  }
  return seeOther('/console/members');
});
