import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StepError } from '../../shared/step-error.ts';
import { compileExpression, DEFAULT_BUDGET, ExpressionError, evaluateTemplate, findExpressions } from '../../shared/engine/expressions.ts';
import { isExpression } from '../../shared/engine/expression-syntax.ts';

const scope = {
  vars: { env: 'prod', amount: 1500, tags: ['a', 'b'], nested: { x: 1 } },
  execution: { id: 'ex_01', workflowId: 'wf_01', trigger: 'api', startedAt: 1700000000000 },
  steps: { notify: { status: 201, headers: {}, body: { ok: true } } },
};

/** The rejection of `p`, or a failure if it resolves. */
const rejection = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
};

const failure = async (template: unknown, options?: Parameters<typeof evaluateTemplate>[2]) => {
  const e = await rejection(evaluateTemplate(template, scope, options));
  expect(e).toBeInstanceOf(StepError);
  expect((e as StepError).code).toBe('EXPRESSION_FAILED');
  return (e as StepError).message;
};

describe('isExpression', () => {
  it('accepts exactly {% ... %} with nothing outside the delimiters', () => {
    expect(isExpression('{% $vars.a %}')).toBe(true);
    expect(isExpression('{%1%}')).toBe(true);
    expect(isExpression('{%  %}')).toBe(true);
    expect(isExpression(' {% 1 %}')).toBe(false);
    expect(isExpression('{% 1 %} ')).toBe(false);
    expect(isExpression('x {% 1 %}')).toBe(false);
    expect(isExpression('{% 1')).toBe(false);
    expect(isExpression('{%}')).toBe(false);
    expect(isExpression('plain')).toBe(false);
  });
});

describe('compileExpression', () => {
  it('caches compiled expressions', () => {
    expect(compileExpression('$vars.a + 1')).toBe(compileExpression('$vars.a + 1'));
  });

  it('throws ExpressionError with jsonata message and position on a syntax error', () => {
    let err: unknown;
    try {
      compileExpression('$foo(');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ExpressionError);
    expect((err as ExpressionError).message).toContain('Expected ")" before end of expression');
    expect((err as ExpressionError).position).toBe(5);
    expect(() => compileExpression('')).toThrow(ExpressionError);
    expect(() => compileExpression("'open")).toThrow(/String literal must be terminated/);
  });
});

describe('findExpressions', () => {
  it('walks objects and arrays and reports paths and trimmed sources', () => {
    const value = { a: '{% 1 %}', b: ['x', { c: '{%  $vars.y  %}' }], d: 3, e: null, f: 'not {% 1 %}' };
    expect(findExpressions(value)).toEqual([
      { path: ['a'], source: '1' },
      { path: ['b', 1, 'c'], source: '$vars.y' },
    ]);
    expect(findExpressions('{% 2 %}', ['steps', 0, 'when'])).toEqual([{ path: ['steps', 0, 'when'], source: '2' }]);
    expect(findExpressions(42)).toEqual([]);
  });

  it('stops at maxDepth', () => {
    expect(findExpressions({ a: { b: '{% 1 %}' } }, [], 1)).toEqual([]);
    expect(findExpressions({ a: { b: '{% 1 %}' } }, [], 2)).toEqual([{ path: ['a', 'b'], source: '1' }]);
  });
});

describe('evaluateTemplate', () => {
  it('binds $vars, $steps and $execution, with the variables as the context', async () => {
    expect(await evaluateTemplate("{% 'Deploy to ' & $vars.env %}", scope)).toBe('Deploy to prod');
    expect(await evaluateTemplate('{% $steps.notify.status %}', scope)).toBe(201);
    expect(await evaluateTemplate('{% $execution.id & "/" & $execution.trigger %}', scope)).toBe('ex_01/api');
    expect(await evaluateTemplate('{% env %}', scope)).toBe('prod');
    expect(await evaluateTemplate('{% $vars.amount > 1000 %}', scope)).toBe(true);
  });

  it('evaluates expressions deep inside objects and arrays and keeps other values literal', async () => {
    const template = {
      text: 'Deploy {% $vars.env %}',
      n: 3,
      flag: false,
      none: null,
      list: ['{% $count($vars.tags) %}', 'x', { deep: '{% $vars.nested %}' }],
      obj: "{% { 'summary': $vars.env, 'tags': $vars.tags } %}",
    };
    expect(await evaluateTemplate(template, scope)).toEqual({
      text: 'Deploy {% $vars.env %}',
      n: 3,
      flag: false,
      none: null,
      list: [2, 'x', { deep: { x: 1 } }],
      obj: { summary: 'prod', tags: ['a', 'b'] },
    });
  });

  it('turns an undefined result into null in arrays, drops the key in objects, and undefined at the top', async () => {
    expect(await evaluateTemplate(['{% $vars.missing %}', 1], scope)).toEqual([null, 1]);
    const obj = (await evaluateTemplate({ a: '{% $vars.missing %}', b: 2 }, scope)) as Record<string, unknown>;
    expect(obj).toEqual({ b: 2 });
    expect('a' in obj).toBe(false);
    expect(await evaluateTemplate('{% $vars.missing %}', scope)).toBeUndefined();
  });

  it('returns a deep copy: results share nothing with the scope or the template', async () => {
    const template = { v: '{% $vars %}', lit: { k: [1] } };
    const out = (await evaluateTemplate(template, scope)) as { v: { tags: string[] }; lit: { k: number[] } };
    out.v.tags.push('c');
    out.lit.k.push(2);
    expect(scope.vars.tags).toEqual(['a', 'b']);
    expect(template.lit.k).toEqual([1]);
  });

  it('reports runtime errors as StepError EXPRESSION_FAILED naming the expression and path', async () => {
    const msg = await failure({ body: { a: ['{% $vars.env + 1 %}'] } }, { path: ['steps', 2] });
    expect(msg).toContain('{% $vars.env + 1 %}');
    expect(msg).toContain('steps.2.body.a.0');
    expect(msg).toMatch(/must evaluate to a number/);
    expect(await failure('{% $undefinedFn() %}')).toMatch(/non-function/);
  });

  it('reports a syntax error at run time as a StepError too', async () => {
    expect(await failure('{% 1 + %}')).toMatch(/Unexpected end of expression/);
  });

  it('refuses results that are not JSON', async () => {
    expect(await failure('{% function($x) { $x } %}')).toMatch(/function/);
    expect(await failure("{% { 'f': $uppercase } %}")).toMatch(/function/);
    expect(await failure('{% 1 / 0 %}')).toMatch(/finite/);
  });
});

describe('evaluateTemplate budgets', () => {
  it('stops a huge sequence quickly', async () => {
    const started = Date.now();
    expect(await failure('{% $count([1..10000000]) %}')).toMatch(/sequence/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops an endless (tail-recursive) loop by the time budget', async () => {
    const started = Date.now();
    expect(await failure('{% ($f := function($x){ $f($x) }; $f(1)) %}')).toMatch(/longer than 1000 ms/);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('stops heavy work by the time budget', async () => {
    const started = Date.now();
    expect(await failure('{% $sum([1..1000000].($ * 2)) %}', { budget: { timeoutMs: 200 } })).toMatch(/longer than 200 ms/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('stops deep recursion by the depth budget', async () => {
    const started = Date.now();
    expect(await failure('{% ($f := function($x){ 1 + $f($x) }; $f(1)) %}')).toMatch(/deeper than 500/);
    expect(Date.now() - started).toBeLessThan(2000);
    const bounded = '{% ($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(20)) %}';
    expect(await evaluateTemplate(bounded, scope)).toBe(20);
    expect(await failure(bounded, { budget: { maxDepth: 20 } })).toMatch(/deeper than 20/);
  });

  it('refuses results larger than the size budget', async () => {
    const started = Date.now();
    expect(await failure("{% $pad('', 1100000, 'x') %}")).toMatch(/size budget of 262144 bytes/);
    expect(await failure("{% $pad('', 300000, 'x') & 'y' %}")).toMatch(/size budget/);
    expect(await failure('{% [1..100000] %}')).toMatch(/size budget/);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(((await evaluateTemplate("{% $pad('', 1000, 'x') %}", scope)) as string).length).toBe(1000);
    expect(await evaluateTemplate("{% $pad('ab', -5, '-') %}", scope)).toBe('---ab');
    expect(await evaluateTemplate("{% $pad('ab', 7, 'xy') %}", scope)).toBe('abxyxyx');
    expect(await failure("{% $pad('', 20, 'x') %}", { budget: { maxBytes: 10 } })).toMatch(/size budget of 10 bytes/);
  });

  it('keeps budgets of concurrent evaluations of the same expression apart', async () => {
    const source = '{% ($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(30)) %}';
    const results = await Promise.allSettled([
      evaluateTemplate(source, scope, { budget: { maxDepth: 20 } }),
      evaluateTemplate(source, scope),
      evaluateTemplate(source, scope, { budget: { maxDepth: 20 } }),
      evaluateTemplate(source, scope),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(results[1]).toEqual({ status: 'fulfilled', value: 30 });
  });

  it('has the documented defaults', () => {
    expect(DEFAULT_BUDGET).toEqual({ timeoutMs: 1000, maxDepth: 500, maxBytes: 256 * 1024 });
  });

  it('hides the budget binding from expressions', async () => {
    expect(await evaluateTemplate('{% $keys($) %}', { ...scope, vars: { a: 1 } })).toBe('a');
    expect(await evaluateTemplate('{% $budget %}', scope)).toBeUndefined();
  });
});

describe('properties', () => {
  it('arbitrary strings either succeed or fail with ExpressionError / StepError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), async (s) => {
        expect(typeof isExpression(s)).toBe('boolean');
        try {
          compileExpression(s);
        } catch (e) {
          expect(e).toBeInstanceOf(ExpressionError);
        }
        for (const template of [s, `{% ${s} %}`, { k: [`{%${s}%}`] }]) {
          try {
            await evaluateTemplate(template, scope, { budget: { timeoutMs: 200 } });
          } catch (e) {
            expect(e).toBeInstanceOf(StepError);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('expression-like strings built from JSONata tokens either succeed or fail with StepError', async () => {
    const token = fc.constantFrom(
      '$vars',
      '.',
      'env',
      '(',
      ')',
      '[',
      ']',
      '{',
      '}',
      ':',
      ',',
      '1',
      '"s"',
      '&',
      '+',
      '$count',
      '..',
      '$f',
      ':=',
      ';',
      'function',
      '$x',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(token, { maxLength: 12 }), async (tokens) => {
        try {
          await evaluateTemplate(`{% ${tokens.join(' ')} %}`, scope, { budget: { timeoutMs: 200 } });
        } catch (e) {
          expect(e).toBeInstanceOf(StepError);
        }
      }),
      { numRuns: 300 },
    );
  });
});
