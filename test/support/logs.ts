import { vi } from 'vitest';
import { logger } from '../../shared/logger.ts';

/** Everything written to stdout (log lines, EMF metrics) while `fn` runs, with the logger at DEBUG. */
export async function capturedLogs(fn: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  });
  logger.setLogLevel('DEBUG');
  try {
    await fn();
  } finally {
    logger.setLogLevel('SILENT');
    spy.mockRestore();
  }
  return lines.join('');
}
