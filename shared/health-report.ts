/**
 * What the process hosting the functions adds to `GET /api/health`'s answer: nothing on AWS. The local
 * stack, while `FAULTS` is set, reports the faults it injected so far here (infra/local/faults.ts), so
 * that a client can prove they happened. A module of its own, without imports: the health route's
 * bundle holds no more than it.
 */
export type HealthReport = {
  /** Faults injected so far, by kind. */
  faults?: Record<string, number>;
};

let source: (() => HealthReport) | undefined;

/** Set (or, with `undefined`, clear) what the health route adds to its answer. */
export const setHealthReport = (report: (() => HealthReport) | undefined) => {
  source = report;
};

/** What the health route adds to its answer now. */
export const healthReport = (): HealthReport => source?.() ?? {};
