import { page } from '../../../shared/console/render.tsx';

/** The sign-in form: email and password, and where to go after (a console path; next-path.ts). */
export const signInPage = (next: string, failed: { status: number; message: string } | undefined, email = '') =>
  page(
    { title: 'Sign in', status: failed?.status ?? 200 },
    <form method="post" action="/console/login">
      {failed ? (
        <p role="alert" class="status-FAILED">
          {failed.message}
        </p>
      ) : null}
      <input type="hidden" name="next" value={next} />
      <label>
        Email
        <input type="email" name="email" autocomplete="username" required value={email} />
      </label>
      <label>
        Password
        <input type="password" name="password" autocomplete="current-password" required />
      </label>
      <button type="submit">Sign in</button>
    </form>,
  );
