import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Table } from '../../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import type { accountUsage, Usage } from '../../../../../shared/domain/account-usage.ts';
import { ErrorSummary, type Errors, Field, firstInvalid } from '../../parts/people-fields.tsx';

export type AccountUsage = Awaited<ReturnType<typeof accountUsage>>;
export type ProfileInput = { slackUserId: string };
/** Which form a refusal belongs to, its errors and input; or what was just saved. */
export type AccountState = {
  profile?: { input: ProfileInput; errors: Errors };
  password?: { errors: Errors };
  saved?: 'profile' | 'password' | undefined;
  status?: number;
};

const of = (u: Usage, noun: string) => (u.limit === null ? `${u.used} ${noun} (no limit)` : `${u.used} of ${u.limit} ${noun}`);
const fmt = (n: number) => n.toLocaleString('en');

const SAVED = { profile: 'Your profile was saved.', password: 'Your password was changed.' } as const;

/** The account: its plan, limits and today's usage; my profile (Slack user id) and "Change password". */
export function accountPage(
  session: ConsoleSession,
  usage: AccountUsage,
  me: { email: string; role: string; slackUserId?: string | undefined },
  state: AccountState = {},
) {
  const profileErrors = state.profile?.errors ?? {};
  const passwordErrors = state.password?.errors ?? {};
  const profileFirst = firstInvalid(profileErrors, ['slackUserId']);
  const passwordFirst = firstInvalid(passwordErrors, ['currentPassword', 'newPassword', 'confirmPassword']);
  return page(
    { title: 'Account', session, section: '/console/account', status: state.status ?? 200 },
    <>
      {state.saved ? (
        <p role="status" class="notice">
          {SAVED[state.saved]}
        </p>
      ) : null}
      <section aria-labelledby="plan-heading">
        <h2 id="plan-heading">Plan and usage</h2>
        <p>
          {session.accountName} is on the <strong>{usage.plan}</strong> plan.
        </p>
        <Table caption="The plan's limits and what is used of them now">
          <thead>
            <tr>
              <th scope="col">What</th>
              <th scope="col">Used</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">Runs in the last 24 hours</th>
              <td>
                {usage.runs.more ? `more than ${fmt(usage.runs.last24Hours)}` : fmt(usage.runs.last24Hours)} runs{' '}
                <span class="muted">(the plan does not limit runs)</span>
              </td>
            </tr>
            <tr>
              <th scope="row">API rate limit</th>
              <td>
                {fmt(usage.rate.used)} of {fmt(usage.rate.limit)} requests this minute
              </td>
            </tr>
            <tr>
              <th scope="row">Enabled schedules</th>
              <td>{of(usage.schedules, 'schedules')}</td>
            </tr>
            <tr>
              <th scope="row">Webhooks</th>
              <td>{of(usage.webhooks, 'webhooks')}</td>
            </tr>
          </tbody>
        </Table>
      </section>
      <section aria-labelledby="profile-heading">
        <h2 id="profile-heading">My profile</h2>
        <p>
          {me.email}, {me.role}.
        </p>
        <form method="post" action="/console/account/profile" novalidate>
          <Csrf session={session} />
          <ErrorSummary errors={profileErrors} />
          <Field
            id="profile-slack"
            name="slackUserId"
            label="Slack user id"
            value={state.profile?.input.slackUserId ?? me.slackUserId ?? ''}
            errors={profileErrors}
            first={profileFirst}
            maxLength={30}
            hint="Like U0123ABCD (Slack: your profile, “Copy member ID”). Slack approval messages reach you by it. Empty removes it."
          />
          <button type="submit">Save profile</button>
        </form>
      </section>
      <section aria-labelledby="password-heading">
        <h2 id="password-heading">Change password</h2>
        <form method="post" action="/console/account/password" novalidate>
          <Csrf session={session} />
          <input type="text" name="username" value={me.email} autocomplete="username" hidden readOnly />
          <ErrorSummary errors={passwordErrors} />
          <Field
            id="password-current"
            name="currentPassword"
            label="Current password"
            type="password"
            autocomplete="current-password"
            errors={passwordErrors}
            first={passwordFirst}
          />
          <Field
            id="password-new"
            name="newPassword"
            label="New password"
            type="password"
            autocomplete="new-password"
            errors={passwordErrors}
            first={passwordFirst}
            hint="At least 10 characters."
          />
          <Field
            id="password-confirm"
            name="confirmPassword"
            label="Confirm new password"
            type="password"
            autocomplete="new-password"
            errors={passwordErrors}
            first={passwordFirst}
          />
          <p class="muted">Changing it signs you out everywhere else: other browsers and API sessions.</p>
          <button type="submit">Change password</button>
        </form>
      </section>
      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Sessions</h2>
        <p>Signed in somewhere you should not be, or on a computer you no longer use? End every session of yours, this one too.</p>
        <form method="post" action="/console/account/sign-out-everywhere">
          <Csrf session={session} />
          <button type="submit" class="secondary">
            Sign out everywhere
          </button>
        </form>
      </section>
    </>,
  );
}
