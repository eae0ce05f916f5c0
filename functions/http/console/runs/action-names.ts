// A run's actions on its console page, by name (no imports: the route modules read these).
export const RUN_ACTIONS = ['cancel', 'retry', 'rerun', 'resume'] as const;
export type RunAction = (typeof RUN_ACTIONS)[number];

/** The buttons' names (the contract: the run page's button and its confirmation's have the same name). */
export const ACTION_BUTTON: Record<RunAction, string> = { cancel: 'Cancel run', retry: 'Retry', rerun: 'Rerun', resume: 'Resume' };

/** The longest cancel reason kept. */
export const REASON_CHARS = 500;
