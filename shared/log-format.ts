import { AsyncLocalStorage } from 'node:async_hooks';
import { inspect } from 'node:util';
import { LogFormatter, LogItem, Logger, LogLevelThreshold } from '@aws-lambda-powertools/logger';
import type {
  ConstructorOptions,
  LogAttributes,
  LogItemExtraInput,
  LogItemMessage,
  UnformattedAttributes,
} from '@aws-lambda-powertools/logger/types';

/** How log lines are written: `json` (Powertools' own JSON lines: CloudWatch, tests) or `text` (a terminal). */
export type LogFormat = 'json' | 'text';

/** `LOG_FORMAT`, checked: `json` when unset; anything but `json` or `text` fails at import, naming it. */
export function logFormat(value: string | undefined): LogFormat {
  if (value === undefined || value === '' || value === 'json') return 'json';
  if (value === 'text') return 'text';
  throw new Error(`LOG_FORMAT must be json or text, got ${JSON.stringify(value)}`);
}

/** A log line already written out as text: the logger prints it as it is, not as JSON. */
export class TextLogItem extends LogItem {
  readonly text: string;
  constructor(text: string, attributes: LogAttributes) {
    super({ attributes });
    this.text = text;
  }
}

const SEVERE = new Set(['WARN', 'ERROR', 'CRITICAL']);

/** A value of `key=value`: as it is when it reads unambiguously, else as JSON. */
const plain = (v: unknown) => (typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : typeof v === 'bigint' ? String(v) : JSON.stringify(v));

/**
 * The `text` format: one short line per request (`14:06:57 GET /api/v1/executions 400 5 ms`, the
 * local time), `time message key=value ...` for other info and debug lines, and warnings and errors
 * in full: the line, then every attribute (errors with their stack and cause) as Node prints them.
 */
export class TextLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const time = attributes.timestamp.toTimeString().slice(0, 8);
    const { message, logLevel } = attributes;
    const { requestId, ...extra } = additional;
    let text: string;
    if (SEVERE.has(logLevel)) {
      const details = { ...(requestId === undefined ? {} : { requestId }), ...extra };
      const shown = Object.keys(details).length ? inspect(details, { depth: 8, breakLength: 120 }) : '';
      const body = shown.includes('\n') ? `\n${shown}` : shown && ` ${shown}`;
      text = `${time} ${logLevel} ${message}${body}`;
    } else if (message === 'request' && extra.method !== undefined && extra.status !== undefined) {
      const query = typeof extra.query === 'string' && extra.query ? `?${extra.query}` : '';
      text = `${time} ${extra.method} ${extra.path}${query} ${extra.status} ${extra.ms} ms`;
    } else {
      const pairs = Object.entries(extra)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => ` ${k}=${plain(v)}`);
      text = `${time} ${message}${pairs.join('')}`;
    }
    return new TextLogItem(text, { level: logLevel, message, ...additional });
  }
}

/**
 * The keys of the unit of work being served (a request: its `requestId`), each its own however many
 * run at once in one process (the local stack, tests): keys appended to the logger itself are
 * shared by every concurrent request, and the last one's would be on every line.
 */
export const logScope = new AsyncLocalStorage<LogAttributes>();

/**
 * Powertools' Logger, which prints a text item (`TextLogFormatter`) as its text: warnings and errors
 * on stderr, the rest on stdout, as Powertools itself does. JSON items print as Powertools prints them.
 * Every line carries the keys of its `logScope` (before the line's own).
 */
export class ServiceLogger extends Logger {
  protected override createAndPopulateLogItem(logLevel: number, input: LogItemMessage, extraInput: LogItemExtraInput): LogItem {
    const scoped = logScope.getStore();
    const extra = scoped ? ([{ ...scoped }, ...extraInput] as LogItemExtraInput) : extraInput;
    return super.createAndPopulateLogItem(logLevel, input, extra);
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (log instanceof TextLogItem) (logLevel >= LogLevelThreshold.WARN ? process.stderr : process.stdout).write(`${log.text}\n`);
    else super.printLog(logLevel, log);
  }

  protected override createLogger(options?: ConstructorOptions): Logger {
    return new ServiceLogger(options);
  }
}
