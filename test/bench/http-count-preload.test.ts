import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, expect, it } from 'vitest';

/**
 * The preload `npm run bench -- load` puts into the stack under test: a process that loads it and makes
 * real SDK calls to the run's emulators has them counted by service and operation, with their bytes,
 * and its own server's unanswered request counted as in flight.
 */
const PRELOAD = pathToFileURL(join(import.meta.dirname, 'http-count-preload.mjs')).href;

const PROGRAM = `
import http from 'node:http';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
const db = new DynamoDBClient({});
await db.send(new DescribeTableCommand({ TableName: process.env.TABLE_NAME }));
await db.send(new DescribeTableCommand({ TableName: process.env.TABLE_NAME }));
await db.send(new ListTablesCommand({}));
await new SQSClient({}).send(new GetQueueAttributesCommand({ QueueUrl: process.env.RUNS_QUEUE_URL, AttributeNames: ['All'] }));
// The "stack's" server on $PORT, with one request it never answers.
const server = http.createServer(() => {});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
process.env.PORT = String(server.address().port);
http.request({ port: server.address().port, host: '127.0.0.1', path: '/hang' }).on('error', () => {}).end();
server.on('request', () => process.stdout.write('ready\\n'));
`;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('counts the SDK calls by service and operation, their bytes, and the server requests in flight', async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowgate-preload-'));
  const child = spawn(process.execPath, ['--import', PRELOAD, '--input-type=module', '-e', PROGRAM], {
    env: { ...process.env, FLOWGATE_BENCH_COUNTS: dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        if (c.toString().includes('ready')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the program exited ${code}`)));
    });
    const file = join(dir, `counts-${child.pid}.json`);
    child.kill('SIGUSR2');
    while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
    const { totals, serverInFlight, seq } = JSON.parse(readFileSync(file, 'utf8'));
    expect(seq).toBe(1);
    expect(serverInFlight).toBe(1);
    expect(Object.keys(totals).sort()).toEqual(['dynamodb', 'sqs']);
    expect(Object.keys(totals.dynamodb).sort()).toEqual(['DescribeTable', 'ListTables']);
    expect(totals.dynamodb.DescribeTable.n).toBe(2);
    expect(totals.dynamodb.ListTables.n).toBe(1);
    expect(totals.sqs).toEqual({ GetQueueAttributes: expect.objectContaining({ n: 1 }) });
    // Each request is signed (SigV4 headers alone are some hundreds of bytes) and answered with JSON.
    const describe = totals.dynamodb.DescribeTable;
    expect(describe.sent / 2).toBeGreaterThan(500);
    expect(describe.sent / 2).toBeLessThan(4000);
    expect(describe.received / 2).toBeGreaterThan(300);
  } finally {
    child.kill('SIGKILL');
  }
});
