import { storage } from '../clients.ts';
import { config } from '../config.ts';
import { readSecrets } from '../db/secret-values.ts';
import { performHttpRequest } from '../egress/http.ts';
import { settleCallback } from './callbacks.ts';
import type { StepIO } from './steps/types.ts';

/** What steps do outside the run (`StepIO`), for the step loop to hand them. */
export const STEP_IO: StepIO = {
  readSecrets: (accountId, names, now) => readSecrets(accountId, names, now),
  request: performHttpRequest,
  putObject: async (key, body, contentType, signal) => {
    const { PutObjectCommand } = await import('../s3.ts');
    await (await storage()).send(
      new PutObjectCommand({ Bucket: config().ARTIFACTS_BUCKET, Key: key, Body: body, ContentType: contentType }),
      {
        abortSignal: signal,
      },
    );
  },
  failCallback: (c, error, now) => settleCallback(c, { status: 'FAILED', error }, now),
};
