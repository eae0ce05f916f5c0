import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { capacitySettings, DEFAULT_WARM_THROUGHPUT, DYNAMODB, type FlowgateStackProps, WARM_TARGET } from '../../infra/settings.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { TABLE } from '../../shared/db/table.ts';

/**
 * The table's capacity in the template (issue 42, item 1; docs/deploying.md "Quotas"): the warm
 * throughput of the table and of each index, from the settings, and the optional on-demand maximum.
 */

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

/** The table's properties as `cdk synth` writes them (no bundling: fast and offline). */
function tableOf(props: Partial<FlowgateStackProps> = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const template = Template.fromStack(new FlowgateStack(app, 'flowgate-capacity', { stage: 'test', ...props }));
  const tables = Object.values(template.findResources('AWS::DynamoDB::Table'));
  expect(tables).toHaveLength(1);
  const table = tables[0]?.Properties as Record<string, any>;
  const index = (name: string) => (table.GlobalSecondaryIndexes as Record<string, any>[]).find((ix) => ix.IndexName === name) ?? {};
  return { table, index };
}
const warm = (read: number, write: number) => ({ ReadUnitsPerSecond: read, WriteUnitsPerSecond: write });

describe('the warm throughput of the table and each index', () => {
  const { table, index } = tableOf();

  it('is sized for the stated target by default: 1,000 one-step runs/s with a quarter of headroom, never below AWS own', () => {
    expect(DEFAULT_WARM_THROUGHPUT).toEqual({
      table: { read: 12_000, write: 11_000 },
      GSI1: { read: 12_000, write: 4_000 },
      GSI2: { read: 12_000, write: 5_000 },
      GSI3: { read: 12_000, write: 4_000 },
    });
    expect(WARM_TARGET).toMatchObject({ runsPerSecond: 1000, headroom: 1.25 });
  });

  it('the template carries it on the table and on every GSI, and no on-demand maximum unless set', () => {
    expect(table.WarmThroughput).toEqual(warm(12_000, 11_000));
    expect(TABLE.indexes.map((ix) => [ix.name, index(ix.name).WarmThroughput])).toEqual([
      ['GSI1', warm(12_000, 4_000)],
      ['GSI2', warm(12_000, 5_000)],
      ['GSI3', warm(12_000, 4_000)],
    ]);
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.OnDemandThroughput).toBeUndefined();
    for (const ix of TABLE.indexes) expect(index(ix.name).OnDemandThroughput, ix.name).toBeUndefined();
  });

  it('a setting replaces the values it names, on the part it names, and leaves the others at their defaults', () => {
    const set = tableOf({ warmThroughput: { table: { write: 110_000 }, GSI2: { read: 15_000, write: 55_000 } } });
    expect(set.table.WarmThroughput).toEqual(warm(12_000, 110_000));
    expect(set.index('GSI2').WarmThroughput).toEqual(warm(15_000, 55_000));
    expect(set.index('GSI1').WarmThroughput).toEqual(warm(12_000, 4_000));
  });

  it('the on-demand maximum, when set, is on the parts it names only', () => {
    const capped = tableOf({ onDemandThroughput: { table: { read: 20_000, write: 10_000 }, GSI2: { write: 6_000 } } });
    expect(capped.table.OnDemandThroughput).toEqual({ MaxReadRequestUnits: 20_000, MaxWriteRequestUnits: 10_000 });
    expect(capped.index('GSI2').OnDemandThroughput).toEqual({ MaxWriteRequestUnits: 6_000 });
    expect(capped.index('GSI1').OnDemandThroughput).toBeUndefined();
    expect(capped.table.WarmThroughput).toEqual(warm(12_000, 11_000));
  });

  it('refuses at synth a part that does not exist, a key other than read and write, a warm value under AWS own, a maximum under 1', () => {
    expect(() => capacitySettings({ warmThroughput: { GSI9: { write: 5000 } } })).toThrow(
      /warmThroughput: unknown part GSI9; parts: table, GSI1, GSI2, GSI3/,
    );
    expect(() => capacitySettings({ warmThroughput: { table: { writes: 5000 } as never } })).toThrow(/unknown key writes/);
    expect(() => capacitySettings({ warmThroughput: { table: { write: 3999 } } })).toThrow(
      /warmThroughput.table.write must be a whole number of units a second of at least 4000, got 3999/,
    );
    expect(() => capacitySettings({ warmThroughput: { GSI1: { read: 12_000.5 } } })).toThrow(/GSI1.read must be a whole number/);
    expect(() => capacitySettings({ onDemandThroughput: { table: { read: 0 } } })).toThrow(
      /onDemandThroughput.table.read .* at least 1, got 0/,
    );
    expect(() => tableOf({ warmThroughput: { table: { read: 100 } } })).toThrow(/at least 12000/);
    expect(DYNAMODB.newOnDemandWarm).toEqual({ read: 12_000, write: 4_000 });
  });
});
