// `flowgate login` and the API calls the other commands make with its session.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

export type Session = { url: string; token: string; expiresAt: number; email: string };

/** Where the session is kept: `FLOWGATE_SESSION_FILE`, else the user's config folder. */
export const sessionPath = () =>
  process.env.FLOWGATE_SESSION_FILE ?? join(process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'flowgate', 'session.json');

export class CliError extends Error {}

/** `path` under the base URL (which may have a path of its own: a stage). */
export const apiUrl = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;

/** A line from the terminal; `hidden`: not echoed (a password). */
async function prompt(question: string, hidden: boolean): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: process.stdin.isTTY === true });
  const answer = new Promise<string>((resolve) => rl.question(question, resolve));
  muted = hidden;
  const line = await answer;
  rl.close();
  if (hidden) process.stderr.write('\n');
  return line;
}

/** An API call with the session (or none); a problem+json refusal becomes a CliError naming its code and field errors. */
export async function call(session: Pick<Session, 'url'> & { token?: string }, method: string, path: string, body?: unknown) {
  const res = await fetch(apiUrl(session.url, path), {
    method,
    headers: {
      ...(session.token ? { authorization: `Bearer ${session.token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      'user-agent': 'flowgate-cli',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as Record<string, any>) : undefined;
  if (res.ok) return json;
  const errors = ((json?.errors ?? []) as { path: string; message: string }[]).map((e) => `\n  ${e.path} ${e.message}`).join('');
  if (res.status === 401) throw new CliError(`${json?.detail ?? 'Not signed in'} (${json?.code ?? res.status}): run flowgate login again`);
  throw new CliError(`${method} ${path}: ${res.status} ${json?.code ?? ''} ${json?.detail ?? ''}${errors}`);
}

/** Sign in and keep the session in a file only the user can read. */
export async function login(url: string): Promise<Session> {
  const email = process.env.FLOWGATE_EMAIL ?? (await prompt('Email: ', false)).trim();
  const password = process.env.FLOWGATE_PASSWORD ?? (await prompt('Password: ', true));
  const base = new URL(url).toString();
  const res = (await call({ url: base }, 'POST', '/api/auth/login', { email, password })) as { token: string; expiresAt: number };
  const session: Session = { url: base, token: res.token, expiresAt: res.expiresAt, email };
  const path = sessionPath();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  // An older file keeps its mode on write: make sure it is the user's alone.
  chmodSync(path, 0o600);
  return session;
}

/** The saved session, or a CliError saying to log in. */
export function savedSession(): Session {
  const path = sessionPath();
  if (!existsSync(path)) throw new CliError(`Not signed in: run flowgate login --url <base URL> (no ${path})`);
  const session = JSON.parse(readFileSync(path, 'utf8')) as Session;
  if (session.expiresAt <= Date.now()) throw new CliError('The session has expired: run flowgate login again');
  return session;
}
