// POST /console/account/password: "Change password". The new one twice (a mismatch is refused at
// "Confirm new password" before anything is checked), the current one checked by the domain (wrong:
// at "Current password"); refused, the account page again with each error at its field, nothing changed.
import { route } from './password.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { changePassword } from '../../../../../shared/domain/session-ends.ts';
import { fieldErrors } from '../../../../../shared/http/middleware/parse-request.ts';
import { ChangePasswordBody } from '../../../../../shared/schemas/identity.ts';
import { renderAccount } from './account-data.ts';
import { type Errors, errorsOf, fieldErrorsOf } from '../../parts/people-fields.tsx';

export const handler = consoleHttp(route, async ({ session, form }) => {
  const field = (name: string) => (form.get(name) ?? '').slice(0, 1000);
  const body = { currentPassword: field('currentPassword'), newPassword: field('newPassword') };
  const parsed = ChangePasswordBody.safeParse(body);
  const errors: Errors = parsed.success ? {} : errorsOf(fieldErrors(parsed.error));
  if (field('confirmPassword') !== body.newPassword) errors.confirmPassword ??= 'does not match the new password';
  const refused = (errors: Errors) => renderAccount(session, { password: { errors }, status: 400 });
  if (!parsed.success || Object.keys(errors).length) return refused(errors);
  try {
    await changePassword(session.principal, parsed.data);
  } catch (e) {
    const errors = fieldErrorsOf(e);
    if (errors) return refused(errors);
    throw e;
  }
  return seeOther('/console/account?saved=password');
});
