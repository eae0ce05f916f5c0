import { describe, expect, it } from 'vitest';
import workflowSchema from '../../schemas/workflow.schema.json' with { type: 'json' };
import { describeProperty, propertiesAt, type SchemaDocument, valuesAt } from '../../shared/console/editor/schema-help.ts';
import { STEP_MODULES } from '../../shared/engine/steps/index.ts';

/** The editor's completion and hover, read from the definition's JSON Schema (no browser: the script's pure half). */
const doc = workflowSchema as unknown as SchemaDocument;
const names = (list: { name: string }[]) => list.map((p) => p.name);

describe("the editor's help from the schema", () => {
  it("offers every registered step type as a step's `type`, top-level and nested", () => {
    const types = STEP_MODULES.map((m) => m.type);
    expect(valuesAt(doc, [{ key: 'steps' }, { item: true }, { key: 'type' }]).sort()).toEqual([...types].sort());
    const nested = valuesAt(doc, [{ key: 'steps' }, { item: true }, { key: 'steps', tag: 'for_each' }, { item: true }, { key: 'type' }]);
    expect(nested).toContain('set');
    expect(nested).not.toContain('for_each');
  });

  it("offers a variable's types, and an enum's values", () => {
    expect(valuesAt(doc, [{ key: 'variables' }, { key: 'who' }, { key: 'type' }])).toEqual([
      'string',
      'number',
      'boolean',
      'object',
      'array',
    ]);
    expect(valuesAt(doc, [{ key: 'steps' }, { item: true }, { key: 'method', tag: 'http_request' }])).toContain('PATCH');
  });

  it("offers an object's properties, required first: the definition's, a step's by its type, a typeless step's common ones", () => {
    expect(names(propertiesAt(doc, []))).toEqual(['steps', 'variables', 'maxStepExecutions', 'output', 'notifications']);
    const set = propertiesAt(doc, [{ key: 'steps' }, { item: true }], 'set');
    expect(names(set).slice(0, 3)).toEqual(['id', 'type', 'values']);
    expect(set.find((p) => p.name === 'values')?.required).toBe(true);
    expect(names(propertiesAt(doc, [{ key: 'steps' }, { item: true }], 'delay'))).toContain('seconds');
    const common = propertiesAt(doc, [{ key: 'steps' }, { item: true }]);
    expect(names(common)).toEqual(expect.arrayContaining(['id', 'type', 'when', 'next']));
    expect(names(common)).not.toContain('values');
  });

  it('describes a property for the hover', () => {
    expect(describeProperty(doc, [{ key: 'steps' }, { item: true }], 'values', 'set')).toBe('values (required in a set step): an object');
    expect(describeProperty(doc, [{ key: 'steps' }, { item: true }], 'onError', 'set')).toBe(
      "onError (optional in a set step): one of 'fail', 'continue' or an object",
    );
    expect(describeProperty(doc, [], 'steps')).toBe('steps (required): a list');
    expect(describeProperty(doc, [], 'nope')).toBeUndefined();
  });
});
