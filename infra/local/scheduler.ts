import { type FireEvent, fireOffsetMs, fireTimes, localClock, type Timer } from '../../shared/schedules/clock.ts';
import { type AsyncFunctionSettings, type AsyncInvokeOptions, invokeAsync } from './async-invoke.ts';
import { type Invocation, workerFunction } from './lambda.ts';

/** setTimeout's limit is 2^31 - 1 ms; a later fire is re-armed when the wait ends. */
const MAX_WAIT_MS = 24 * 3600 * 1000;
const FIRE_FUNCTION: AsyncFunctionSettings = { ...workerFunction('schedule/fire', 30), config: 'schedule/fire' };
/** How far back a timer's change may be and still count its fires from the change (below: from now). */
const CHANGE_GRACE_MS = 5_000;

/**
 * From when a timer just put counts its fires (strictly after): from its change, so a rate's first fire,
 * its anchor at the change (a create, a new expression), is due at once, as on EventBridge; never from
 * longer ago than a few seconds, so a timer loaded at start (or re-put by the sweep) replays nothing.
 */
export const armedFrom = (t: Pick<Timer, 'updatedAt'>, now: number) => Math.min(now, Math.max(t.updatedAt, now - CHANGE_GRACE_MS)) - 1;

/**
 * The local stand-in for EventBridge Scheduler: one timer per enabled schedule, armed for the next fire
 * time `nextFireTimes` gives (the same expression rules as AWS), invoking the same fire handler
 * asynchronously, as the scheduler does on AWS, within the same window after its time (a `cron` or a
 * `rate` at its schedule's fixed offset in the minute, `fireOffsetMs`; an `at()` on time), the event
 * carrying the time it was due: a fire that throws or times out is retried twice, then
 * its record goes to the on-failure queue (infra/local/async-invoke.ts; `opts` for tests). Timers live in this process only: the local stack loads them from the table at start
 * (the sweep's drift repair), so fires missed while it was stopped are not replayed (as on AWS, where
 * a schedule fires only while it exists; docs/schedules.md).
 */
export async function startLocalScheduler(
  opts: {
    retryDelaysMs?: AsyncInvokeOptions['retryDelaysMs'];
    /** Each try of a fire, as it ends (tests). */
    onAttempt?: (fire: FireEvent, attempt: number, outcome: Invocation<unknown>) => void | Promise<void>;
  } = {},
) {
  const { handler } = await import('../../functions/schedule/fire.ts');
  const clock = localClock();
  const armed = new Map<string, NodeJS.Timeout>();
  const inFlight = new Set<Promise<unknown>>();
  const stopping = new AbortController();
  let stopped = false;

  const arm = (scheduleId: string, after = Date.now()) => {
    clearTimeout(armed.get(scheduleId));
    armed.delete(scheduleId);
    const timer = clock.timers.get(scheduleId);
    if (!timer || stopped) return;
    const [next] = fireTimes(timer, after, 1);
    if (next === undefined) return;
    // Due at `next`, started within its window: the event still says `next`, as AWS's scheduled time does.
    const start = next + fireOffsetMs(timer);
    const wait = start - Date.now();
    const handle = setTimeout(
      () => {
        armed.delete(scheduleId);
        if (start > Date.now()) return arm(scheduleId, after);
        const scheduledTime = new Date(next).toISOString();
        const event: FireEvent = { accountId: timer.accountId, scheduleId, scheduledTime };
        const fired = invokeAsync(FIRE_FUNCTION, handler, event, {
          ...(opts.retryDelaysMs && { retryDelaysMs: opts.retryDelaysMs }),
          signal: stopping.signal,
          onAttempt: (attempt, outcome) => {
            if (outcome.status === 'error')
              console.error(`local schedule ${scheduleId} fire at ${scheduledTime} failed (try ${attempt})`, outcome.error);
            return opts.onAttempt?.(event, attempt, outcome);
          },
        });
        inFlight.add(fired);
        void fired.finally(() => inFlight.delete(fired));
        // The next fire after this one, whatever the handler does (it may remove the timer: an at() is done).
        if (clock.timers.get(scheduleId) === timer) arm(scheduleId, next);
      },
      Math.max(0, Math.min(wait, MAX_WAIT_MS)),
    );
    handle.unref();
    armed.set(scheduleId, handle);
  };

  clock.onChange = (scheduleId) => {
    const timer = clock.timers.get(scheduleId);
    arm(scheduleId, timer ? armedFrom(timer, Date.now()) : undefined);
  };
  for (const scheduleId of clock.timers.keys()) arm(scheduleId);
  return {
    stop: async () => {
      stopped = true;
      // Retries still waiting are dropped (a try under way finishes).
      stopping.abort();
      clock.onChange = () => undefined;
      for (const handle of armed.values()) clearTimeout(handle);
      armed.clear();
      await Promise.allSettled([...inFlight]);
    },
  };
}
