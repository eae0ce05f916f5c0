import { countRunChange } from '../db/entities/run-hours.ts';
import { nextSeq, eventsPut, newEvent } from '../db/entities/run-events.ts';
import { cancelledData, cancelledUpdate } from '../db/entities/execution-writes.ts';
import { getExecution } from '../db/entities/execution.ts';
import { writeAll } from '../db/transact.ts';
import { isConditionFailure } from '../errors.ts';
import { logger } from '../logger.ts';
import { notifyEvents } from './notify.ts';

/** A write lost its condition: end the run CANCELLED if that was asked for, else stop without touching it. */
export async function stopAfterLostWrite(accountId: string, executionId: string, owner: string) {
  const current = await getExecution(accountId, executionId);
  if (current?.status === 'RUNNING' && current.cancelRequested && current.lease?.owner === owner) {
    const now = Date.now();
    const event = {
      ...newEvent(executionId, 'execution.cancelled', cancelledData(current, 'RUNNING'), now),
      seq: nextSeq(current),
    };
    try {
      await writeAll([{ Update: cancelledUpdate(current, current.cancelReason, now) }, eventsPut(accountId, [event])]);
      countRunChange(current, { status: 'CANCELLED' }, now);
      await notifyEvents(current, [event]);
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
    return;
  }
  logger.warn('checkpoint lost: the run changed under this worker; stopping', { executionId, status: current?.status });
}
