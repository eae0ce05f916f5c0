import { vi } from 'vitest';
import { logger } from '../../shared/logger.ts';
import { testLogs } from './test-logs.ts';

/**
 * The logger writes straight to stdout and stderr (Powertools' own console), which vitest does not
 * see. Unless `TEST_LOGS` is set, those writes go through vitest's console instead, so each line is
 * held with its test. The console's methods are taken now, so a test spying on `console.error` sees
 * only what the code under test writes there itself.
 */
export function holdServerLogs() {
  // Once a process: a worker that runs file after file (`isolate: false`) keeps the first file's.
  const held = globalThis as { flowgateLogsHeld?: boolean };
  if (testLogs() || held.flowgateLogsHeld) return;
  held.flowgateLogsHeld = true;
  const out = console.log.bind(console);
  const err = console.warn.bind(console);
  let forwarding = false;
  for (const [stream, print] of [
    [process.stdout, out],
    [process.stderr, err],
  ] as const) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, encoding?: unknown, done?: unknown) => {
      // Should vitest's console itself write here (no test to hold it for), it goes out as it is.
      if (forwarding) return write(chunk, encoding, done);
      forwarding = true;
      try {
        print(String(chunk).replace(/\n$/, ''));
      } finally {
        forwarding = false;
      }
      const callback = typeof encoding === 'function' ? encoding : done;
      if (typeof callback === 'function') queueMicrotask(() => callback());
      return true;
    }) as typeof stream.write;
  }
}

/** Everything written to stdout (log lines, EMF metrics) while `fn` runs, with the logger at DEBUG. */
export async function capturedLogs(fn: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  });
  const level = logger.getLevelName();
  logger.setLogLevel('DEBUG');
  try {
    await fn();
  } finally {
    logger.setLogLevel(level);
    spy.mockRestore();
  }
  return lines.join('');
}
