import { tableName } from '../clients.ts';
import { isConditionFailure } from '../errors.ts';

export type Condition = { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };

/**
 * Build an UpdateItem (for `UpdateCommand` or a transaction's `Update`) that sets and removes
 * top-level attributes, conditional on `condition`. Attribute names are always aliased, so entity
 * fields never collide with DynamoDB's reserved words.
 */
export function buildUpdate(key: Record<string, string>, set: Record<string, unknown>, remove: readonly string[], condition?: Condition) {
  const names: Record<string, string> = { ...condition?.names };
  const values: Record<string, unknown> = { ...condition?.values };
  const sets = Object.entries(set)
    .filter(([, v]) => v !== undefined)
    .map(([k, v], i) => {
      names[`#s${i}`] = k;
      values[`:s${i}`] = v;
      return `#s${i} = :s${i}`;
    });
  const removes = remove.map((k, i) => {
    names[`#r${i}`] = k;
    return `#r${i}`;
  });
  const expression = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
  return {
    TableName: tableName(),
    Key: key,
    UpdateExpression: expression,
    ConditionExpression: condition?.expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
  };
}

/** Whether a conditional write was applied: false when its condition failed, other errors thrown. */
export async function applied(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (e) {
    if (isConditionFailure(e)) return false;
    throw e;
  }
}
