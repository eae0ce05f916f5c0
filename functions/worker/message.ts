import type { SQSRecord } from 'aws-lambda';
import type { z } from 'zod';

/** The record's body parsed with `schema`; undefined for a body no retry could fix. */
export function parseMessage<T>(schema: z.ZodType<T>, record: SQSRecord): T | undefined {
  try {
    const r = schema.safeParse(JSON.parse(record.body));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}
