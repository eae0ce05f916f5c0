import * as z from 'zod';

/**
 * `FAULTS` (docs/local-mode.md): the fault kinds and the setting's syntax, a comma-separated list of
 * `kind:probability`. Apart from infra/local/faults.ts, which injects them, so that `npm start` checks
 * the setting before it loads anything (infra/local/main.ts).
 */
export const FAULT_KINDS = [
  'dynamodb.throttle',
  'dynamodb.error',
  'sqs.duplicate',
  'sqs.delay',
  's3.slowdown',
  'lambda.crash',
  'lambda.timeout',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type Faults = Partial<Record<FaultKind, number>>;

const Entry = z
  .string()
  .trim()
  .regex(/^[^:]+:[^:]+$/, { error: (i) => `"${i.input}" is not kind:probability` })
  .transform((s) => s.split(':').map((p) => p.trim()) as [string, string])
  .pipe(
    z.tuple([
      z.enum(FAULT_KINDS, { error: (i) => `"${i.input}" is not a fault kind (the kinds: ${FAULT_KINDS.join(', ')})` }),
      z
        .string()
        .regex(/^\d+(\.\d+)?$/, { error: (i) => `"${i.input}" is not a probability from 0 to 1` })
        .transform(Number)
        .pipe(z.number().max(1, { error: (i) => `${i.input} is not a probability from 0 to 1` })),
    ]),
  );

/** `FAULTS`: `kind:probability` entries, comma-separated, each kind once (an empty value: no faults). */
export const FaultsSetting = z
  .string()
  .transform((s) => s.split(',').filter((e) => e.trim() !== ''))
  .pipe(z.array(Entry))
  .superRefine((entries, ctx) => {
    const seen = new Set<string>();
    for (const [kind] of entries) {
      if (seen.has(kind)) ctx.addIssue({ code: 'custom', message: `${kind} is named twice` });
      seen.add(kind);
    }
  })
  .transform((entries): Faults => Object.fromEntries(entries));

/** The faults `raw` (the `FAULTS` value) asks for; undefined when unset. Throws a readable error for a malformed value. */
export function parseFaults(raw: string | undefined): Faults | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const parsed = FaultsSetting.safeParse(raw);
  if (!parsed.success) throw new Error(`FAULTS=${raw} is not valid: ${faultsProblem(parsed.error)}`);
  return parsed.data;
}

/** A zod error of `FaultsSetting` as one line. */
export const faultsProblem = (e: z.ZodError) =>
  `${e.issues.map((i) => i.message).join('; ')}. Expected kind:probability,… e.g. dynamodb.throttle:0.05,sqs.duplicate:0.2`;
