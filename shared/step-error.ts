/**
 * A step failed for a reason the run reports (`error: { code, message }` on the step and, unless the
 * step allows failure, on the execution). Anything else thrown inside a step is a worker fault.
 */
export class StepError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'StepError';
  }
}
