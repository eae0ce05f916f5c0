// `npm run bench -- chaos [--runs N]`: the chaos soak (chaos.ts) on the local stack started as a
// process, as `npm start` starts it, with every fault kind at 5 % (docs/performance.md "Chaos").
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CHAOS_FAULTS, chaosSoak } from './chaos.ts';
import { startStackProcess } from './stack-process.ts';

export async function chaosPart(launchEnv: NodeJS.ProcessEnv, runs: number) {
  const logFile = join(tmpdir(), `flowgate-chaos-${Date.now()}.log`);
  const stack = await startStackProcess(
    '.',
    {
      ...launchEnv,
      FAULTS: CHAOS_FAULTS,
      HTTP_STEP_ALLOWLIST: '127.0.0.1/32',
      LOCAL_SWEEP_SECONDS: '5',
      LOCAL_ASYNC_RETRY_SECONDS: '1',
      LOG_FORMAT: 'json',
    },
    { logFile },
  );
  try {
    const sqs = new SQSClient({
      endpoint: stack.env.AWS_ENDPOINT_URL_SQS,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    const deadLetters = async () => {
      const out: Record<string, string[]> = {};
      for (const name of ['runs-dlq', 'heavy-runs-dlq', 'notifications-dlq', 'async-failures']) {
        const url = await sqs.send(new GetQueueUrlCommand({ QueueName: name })).then(
          (r) => r.QueueUrl,
          () => undefined,
        );
        if (!url) continue;
        const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
        out[name] = Messages.map((m) => m.Body ?? '');
      }
      return out;
    };
    const result = await chaosSoak(
      { url: stack.url, demo: stack.demo, deadLetters, logs: () => readFileSync(logFile, 'utf8') },
      { runs, settleSeconds: 240, progress: (l) => console.error(`chaos: ${l}`) },
    );
    console.log(`\nChaos soak: ${runs} units of work, every fault kind at 5 %, ${result.seconds} s; the stack's log: ${logFile}`);
    console.log('Faults injected (GET /api/health):', JSON.stringify(result.faults));
    console.log('Answers by status:', JSON.stringify(result.answers.byStatus), `retries: ${result.answers.retries}`);
    console.table(result.rows);
    return result;
  } finally {
    await stack.stop();
  }
}
