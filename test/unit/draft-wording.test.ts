import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDraft, type DraftError } from '../../functions/http/console/workflows/draft.ts';
import type { Actor } from '../../shared/domain/workflow-access.ts';
import { closest, editDistance } from '../../shared/schemas/wording.ts';

/**
 * The editor's errors in plain words (shared/schemas/wording.ts through the draft's check): a table of
 * bad drafts and the exact text each gets, with the line and column it points at; and any text at all
 * gives errors or a definition, never a throw. Every draft here fails the schema, so no save check (and
 * no storage) is reached.
 */

const actor = { accountId: 'acct_unit', userId: 'usr_unit', role: 'admin' } as unknown as Actor;
const check = (text: string) => checkDraft(actor, { name: 'Draft', text }, undefined);
const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** The definition's errors as `path @line:column message`. */
async function errorsOf(text: string) {
  const checked = await check(text);
  expect(checked.ok).toBe(false);
  return checked.ok ? [] : checked.errors.map((e: DraftError) => `${e.path} @${e.line}:${e.column} ${e.message}`);
}

describe('did you mean', () => {
  it('measures edits and picks the closest known name within a slip', () => {
    expect(editDistance('sett', 'set')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(closest('sett', ['set', 'http_request', 'delay'])).toBe('set');
    expect(closest('http_requst', ['set', 'http_request'])).toBe('http_request');
    expect(closest('Delay', ['set', 'delay'])).toBe('delay');
    expect(closest('zzzzzz', ['set', 'delay'])).toBeUndefined();
    expect(closest('x', [])).toBeUndefined();
  });
});

describe('the wording of a draft refused by the schema', () => {
  const table: [string, string, string[]][] = [
    [
      'an unknown step type',
      pretty({ steps: [{ id: 'greet', type: 'sett', values: { a: 1 } }] }),
      ["steps.0.type @5:7 unknown step type 'sett': did you mean 'set'?"],
    ],
    [
      'a step type nothing is close to',
      pretty({ steps: [{ id: 'greet', type: 'teleport' }] }),
      [
        "steps.0.type @5:7 unknown step type 'teleport': use one of 'set', 'http_request', 'manual_approval', 'artifact', 'delay', 'fail', 'wait_for_callback', 'switch', 'for_each'",
      ],
    ],
    [
      'a missing step type',
      pretty({ steps: [{ id: 'greet' }] }),
      [
        "steps.0.type @3:5 missing the step type: one of 'set', 'http_request', 'manual_approval', 'artifact', 'delay', 'fail', 'wait_for_callback', 'switch', 'for_each'",
      ],
    ],
    [
      'a misspelt property',
      pretty({ steps: [{ id: 'greet', type: 'set', valuez: { a: 1 } }] }),
      ['steps.0.values @3:5 is missing: it must be an object', "steps.0.valuez @6:7 unknown property 'valuez': did you mean 'values'?"],
    ],
    [
      'a misspelt top-level property',
      pretty({ stepz: [] }),
      ['steps @1:1 is missing: it must be a list (JSON array)', "stepz @2:3 unknown property 'stepz': did you mean 'steps'?"],
    ],
    [
      'a wrong type',
      pretty({ steps: [{ id: 'greet', type: 'set', values: 5 }] }),
      ['steps.0.values @6:7 must be an object, not a whole number'],
    ],
    [
      'a list where a string goes',
      pretty({ steps: [{ id: ['a'], type: 'set', values: {} }] }),
      ['steps.0.id @4:7 must be a string, not a list'],
    ],
    [
      'a misspelt choice',
      pretty({ steps: [{ id: 'call', type: 'http_request', url: 'https://example.com', method: 'GETT' }] }),
      ["steps.0.method @7:7 'GETT' is not one of 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD': did you mean 'GET'?"],
    ],
    ['no steps', pretty({ steps: [] }), ['steps @2:3 needs at least 1 item']],
    [
      'a nested step in a loop',
      pretty({ steps: [{ id: 'each', type: 'for_each', items: '{% [1, 2] %}', steps: [{ id: 'inner', type: 'dela', seconds: 1 }] }] }),
      ["steps.0.steps.0.type @10:11 unknown step type 'dela': did you mean 'delay'?"],
    ],
  ];
  it.each(table)('%s', async (_, text, expected) => {
    expect(await errorsOf(text)).toEqual(expected);
  });

  it('a JSON syntax error keeps its line and column', async () => {
    expect(await errorsOf('{\n  "steps": [\n    {"id": "a",}\n  ]\n}')).toEqual([
      '(definition) @3:16 JSON syntax error: property name expected',
    ]);
  });
});

describe('any text', () => {
  it('gives errors or a definition, never a throw', async () => {
    const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
    const stepish = fc
      .record(
        {
          id: fc.oneof(fc.string(), fc.integer()),
          type: fc.oneof(fc.constantFrom('set', 'sett', 'delay', 'for_each', 'switch', 'http_request'), fc.string(), fc.jsonValue()),
          values: fc.jsonValue({ maxDepth: 2 }),
          steps: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 2 }),
        },
        { requiredKeys: [] },
      )
      .map((step) => pretty({ steps: [step] }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), json, stepish), async (text) => {
        const checked = await check(text);
        if (checked.ok) expect(checked.definition.steps.length).toBeGreaterThan(0);
        else {
          expect(checked.errors.length).toBeGreaterThan(0);
          for (const e of checked.errors) expect(typeof e.message).toBe('string');
        }
      }),
      { numRuns: 300 },
    );
  });
});
