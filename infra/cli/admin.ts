// Operator CLI (docs/local-mode.md):
//   npm run admin -- create-account --name <name> --plan <plan> --email <email> --password-stdin
//   (or the password in ADMIN_PASSWORD; never in the arguments, which process lists and shell history show)
//   npm run admin -- set-plan --account <id> --plan <plan>
//   npm run admin -- migrate [--dry-run] [--rate <items/s>] [--from <cursor>] [--max <items>]
// Against AWS: TABLE_NAME and the usual AWS credentials in the environment. Otherwise it finds the
// emulators of a running `npm start` through DATA_DIR (default .data/).
import { resolve } from 'node:path';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import * as z from 'zod';
import { runningEmulatorsEnv } from '../local/emulators.ts';

const USAGE = `usage:
  npm run admin -- create-account --name <name> --plan <free|pro|team|enterprise> --email <email> --password-stdin
      the admin's password: the first line of standard input with --password-stdin, else the ADMIN_PASSWORD
      environment variable (never an argument: process lists and shell history show those)
  npm run admin -- set-plan --account <accountId> --plan <free|pro|team|enterprise>
  npm run admin -- migrate [--dry-run] [--rate <items read per second, default 100>] [--from <cursor>] [--max <items>]
      moves items of older key shapes to today's while the service runs (docs/deploying.md, "Upgrading");
      idempotent; progress on standard error, each line with the cursor to go on --from
  npm run admin -- [<command>] --help
      prints this and does nothing else; an option a command does not know is refused (exit code 2)`;

const fail = (message: string): never => {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
};

// Each command's options, and nothing else: parseArgs in strict mode refuses any other (a typo such as
// `--dryrun` must never run a real migration). `--password` is known only to be refused with its reason.
const COMMANDS = {
  'create-account': {
    name: { type: 'string' },
    plan: { type: 'string' },
    email: { type: 'string' },
    password: { type: 'string' },
    'password-stdin': { type: 'boolean' },
  },
  'set-plan': { account: { type: 'string' }, plan: { type: 'string' } },
  migrate: { 'dry-run': { type: 'boolean' }, rate: { type: 'string' }, from: { type: 'string' }, max: { type: 'string' } },
} as const satisfies Record<string, ParseArgsOptionsConfig>;
type Command = keyof typeof COMMANDS;
const HELP = { help: { type: 'boolean', short: 'h' } } as const;

const [command, ...rest] = process.argv.slice(2);
// `--help` (alone or after a command) prints the usage and does nothing else.
if (command === undefined) fail('no command');
if (command === '--help' || command === '-h') {
  console.log(USAGE);
  process.exit(0);
}
if (!Object.hasOwn(COMMANDS, command as string)) fail(`unknown command ${command}`);
const cmd = command as Command;
const parsed = (() => {
  try {
    return parseArgs({ args: rest, strict: true, allowPositionals: false, options: { ...COMMANDS[cmd], ...HELP } });
  } catch (e) {
    return fail(`${cmd}: ${(e as Error).message}`);
  }
})();
if (parsed.values.help) {
  console.log(USAGE);
  process.exit(0);
}
const values = parsed.values as Partial<Record<string, string | boolean>>;

if (!process.env.TABLE_NAME) {
  const env = runningEmulatorsEnv(resolve(process.env.DATA_DIR ?? '.data'));
  if (!env)
    fail('No TABLE_NAME in the environment and no local stack found under DATA_DIR: run `npm start` first, or set TABLE_NAME for AWS.');
  Object.assign(process.env, env);
}
// Imported after the environment is settled: the SDK clients read it when first used.
const { Plan } = await import('../../shared/config.ts');
const { createAccount } = await import('../../shared/domain/accounts.ts');
const { setPlan } = await import('../../shared/db/entities/account.ts');
const { Email, Password } = await import('../../shared/schemas/identity.ts');

/** The first line of standard input (without its line ending). */
async function stdinLine(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

async function password(): Promise<string | undefined> {
  if (values.password !== undefined)
    fail('--password is not accepted: process lists and shell history would show it. Use --password-stdin or ADMIN_PASSWORD.');
  if (values['password-stdin']) return stdinLine();
  return process.env.ADMIN_PASSWORD;
}

const parse = <T>(schema: z.ZodType<T>, input: unknown): T => {
  const r = schema.safeParse(input);
  return r.success ? r.data : fail(r.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
};

try {
  switch (cmd) {
    case 'create-account': {
      const input = parse(z.object({ name: z.string().min(1).max(100), plan: Plan, email: Email, password: Password }), {
        ...values,
        password: await password(),
      });
      // On the new account's audit log as the operator's, through the CLI.
      const { account, admin } = await createAccount(input, Date.now(), { kind: 'operator', via: { channel: 'cli' } });
      console.log(JSON.stringify({ accountId: account.accountId, userId: admin.userId }));
      break;
    }
    case 'set-plan': {
      const input = parse(z.object({ account: z.string().min(1), plan: Plan }), values);
      const account = await setPlan(input.account, input.plan);
      console.log(JSON.stringify({ accountId: account.accountId, plan: account.plan }));
      break;
    }
    case 'migrate': {
      const count = z.coerce.number().int().min(1).max(100_000);
      const input = parse(
        z.object({ 'dry-run': z.boolean().optional(), rate: count.optional(), from: z.string().min(1).optional(), max: count.optional() }),
        values,
      );
      const { migrate } = await import('../../shared/db/migrations/index.ts');
      const done = await migrate({
        dryRun: input['dry-run'] === true,
        ...(input.rate ? { ratePerSecond: input.rate } : {}),
        ...(input.from ? { from: input.from } : {}),
        ...(input.max ? { maxItems: input.max } : {}),
        onPage: (p) =>
          console.error(
            `scanned ${p.scanned}, moved ${JSON.stringify(p.moved)}, superseded ${p.superseded}, cursor ${p.cursor ?? 'none (done)'}`,
          ),
      });
      console.log(JSON.stringify({ dryRun: input['dry-run'] === true, ...done }));
      break;
    }
  }
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
