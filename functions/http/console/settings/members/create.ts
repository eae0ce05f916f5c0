// POST /console/members (admins; a member's is 403): "Add member". The initial password is made here
// (random, 16 characters), the member created as POST /api/members does, and the password shown on this
// answer once (the form's id is claimed first: a reload makes nothing and shows nothing). Refused: the
// form again with each error at its field (an email in use: at Email, 409), nothing made.
import { randomBytes } from 'node:crypto';
import { route } from './create.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { onceForForm } from '../../../../../shared/domain/form-once.ts';
import { createMember } from '../../../../../shared/domain/members.ts';
import { AppError } from '../../../../../shared/errors.ts';
import { fieldErrors } from '../../../../../shared/http/middleware/parse-request.ts';
import { CreateMemberBody } from '../../../../../shared/schemas/identity.ts';
import { memberCreatedPage, memberFormPage, type MemberInput } from './form.tsx';
import { errorsOf } from '../../parts/people-fields.tsx';

const FIELD_CHARS = 1000;

export const handler = consoleHttp(route, async ({ session, form }) => {
  const input: MemberInput = {
    email: (form.get('email') ?? '').trim().slice(0, FIELD_CHARS),
    role: (form.get('role') ?? '').slice(0, FIELD_CHARS),
    formId: (form.get('formId') ?? '').slice(0, 100),
  };
  const password = randomBytes(12).toString('base64url');
  const parsed = CreateMemberBody.safeParse({ email: input.email, role: input.role, password });
  if (!parsed.success) return memberFormPage(session, input, errorsOf(fieldErrors(parsed.error)), 400);
  try {
    const member = await onceForForm(session.principal, input.formId, () => createMember(session.principal, parsed.data));
    return memberCreatedPage(session, member, password);
  } catch (e) {
    if (e instanceof AppError && e.code === 'EMAIL_TAKEN') return memberFormPage(session, input, { email: e.message }, 409);
    throw e;
  }
});
