// flowgate's commands (docs/workflows-as-code.md); cli/run.ts runs them.
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { formatError, loadWorkflows } from './files.ts';
import { apply, exportTo, hasChanges, plan, renderPlan } from './plan.ts';
import { CliError, login, savedSession } from './session.ts';
import { runTests } from './test.ts';

const USAGE = `Usage:
  flowgate validate <dir|file...>         check workflow files offline, as the server does
  flowgate login --url <base URL>         sign in (FLOWGATE_EMAIL / FLOWGATE_PASSWORD, or the prompt)
  flowgate plan <dir> [--prune]           what apply would do (exit 0: nothing, 2: changes, 1: error)
  flowgate apply <dir> [--prune] [--yes]  create, update (and with --prune delete) workflows to match the folder
  flowgate export <dir>                   write the account's workflows as files
  flowgate test <dir>                     run each *.test.json with its mocks (exit 0: all passed, 1: otherwise)
Options: --origin <text> where the files live, shown in the console (default: the git remote and path)`;

const OPTIONS = {
  url: { type: 'string' },
  prune: { type: 'boolean', default: false },
  yes: { type: 'boolean', default: false },
  origin: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const out = (s: string) => process.stdout.write(`${s}\n`);

/** Read and check the folder; print every error and stop (exit 1) when one is found. */
function loadOrFail(targets: string[]) {
  if (targets.length === 0) throw new CliError(`Name a folder or files.\n${USAGE}`);
  const loaded = loadWorkflows(targets);
  if (loaded.errors.length) {
    for (const e of loaded.errors) process.stderr.write(`${formatError(e)}\n`);
    throw new CliError(`${loaded.errors.length} error(s): nothing was sent`);
  }
  return loaded.files;
}

async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw new CliError('Not a terminal: pass --yes to apply without a question');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const answer = await rl.question(question);
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

/** Run one command; its exit code. */
export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [command, ...targets] = positionals;
  if (values.help || !command) {
    out(USAGE);
    return command || values.help ? 0 : 1;
  }
  switch (command) {
    case 'validate': {
      if (targets.length === 0) throw new CliError(`Name a folder or files.\n${USAGE}`);
      const { files, errors } = loadWorkflows(targets);
      for (const e of errors) out(formatError(e));
      out(errors.length ? `${errors.length} error(s)` : `${files.length} workflow file(s) valid`);
      return errors.length ? 1 : 0;
    }
    case 'login': {
      if (!values.url) throw new CliError('Name the service: flowgate login --url <base URL>');
      const session = await login(values.url);
      out(`Signed in to ${session.url} as ${session.email} until ${new Date(session.expiresAt).toISOString()}`);
      return 0;
    }
    case 'plan': {
      const files = loadOrFail(targets);
      const items = await plan(savedSession(), files, { prune: values.prune, origin: values.origin });
      out(renderPlan(items));
      return hasChanges(items) ? 2 : 0;
    }
    case 'apply': {
      const files = loadOrFail(targets);
      const session = savedSession();
      const items = await plan(session, files, { prune: values.prune, origin: values.origin });
      out(renderPlan(items));
      if (!hasChanges(items)) return 0;
      if (!values.yes && !(await confirm('Apply these changes? [y/N] '))) {
        out('Nothing applied.');
        return 1;
      }
      out(renderPlan(await apply(session, files, items, values.origin), 'Applied'));
      return 0;
    }
    case 'export': {
      if (targets.length !== 1) throw new CliError(`Name one folder.\n${USAGE}`);
      const written = await exportTo(savedSession(), targets[0] as string, { origin: values.origin });
      for (const f of written) out(`wrote ${f}`);
      out(`${written.length} workflow file(s) written`);
      return 0;
    }
    case 'test': {
      const files = loadOrFail(targets);
      const { lines, failed } = await runTests(savedSession(), targets, files);
      for (const line of lines) out(line);
      return failed ? 1 : 0;
    }
    default:
      throw new CliError(`Unknown command ${command}.\n${USAGE}`);
  }
}
