// flowgate: workflows as code (docs/workflows-as-code.md). `npx flowgate <command>` or `npm run flowgate -- <command>`.
import { main } from './flowgate.ts';
import { CliError } from './session.ts';

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  const usage = e instanceof CliError || String((e as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`flowgate: ${usage ? (e as Error).message : e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
}
