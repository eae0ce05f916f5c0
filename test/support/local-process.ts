import { spawn } from 'node:child_process';

/**
 * `npm start`'s program as a child process, on its own emulators and data: the environment of this
 * test run minus what points at the shared emulators, plus `env`. Resolves once it prints "ready at".
 * `detached` gives it a process group of its own (to SIGKILL it with its children).
 */
export async function startLocalProcess(dataDir: string, port: number, opts: { env?: Record<string, string>; detached?: boolean } = {}) {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('AWS_') && !/^(TABLE_NAME|RUNS_QUEUE_URL|NOTIFY_QUEUE_URL|ARTIFACTS_BUCKET|PUBLIC_BASE_URL)$/.test(k),
    ),
  );
  // As `npm start` runs it: Node with tsx as a loader, not the tsx CLI, whose signal relay kills the
  // program (SIGKILL) when it does not acknowledge a signal within 30 ms, which a busy machine misses.
  const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
    env: { ...inherited, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  let out = '';
  // Also this test's log (test/support/logs.ts): printed if it fails, or as it comes with TEST_LOGS=1.
  child.stdout?.on('data', (d) => {
    out += String(d);
    process.stdout.write(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
    process.stderr.write(d);
  });
  const deadline = Date.now() + 90_000;
  while (!out.includes('ready at')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the local stack did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, output: () => out };
}

/**
 * A free port below the kernel's range for outgoing connections (32768–60999 here), for a stack a
 * test stops and starts again on the same port: a port the kernel handed out for listening can be
 * taken meanwhile as the local end of another process's connection (EADDRINUSE on the restart).
 */
export async function freeStackPort(): Promise<number> {
  const { createServer } = await import('node:net');
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
