import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { asksPeople, everyStep, nestedOf } from '../../shared/engine/every-step.ts';
import { isContainerType, moduleOf, STEP_MODULES, Step } from '../../shared/engine/steps/index.ts';
import { exampleDefinition } from '../support/definitions.ts';

/**
 * A step type is one module (shared/engine/steps/<type>.ts) and one line in the registry
 * (shared/engine/steps/index.ts): nothing else in the source names a step type, so the loop, the
 * waits, the definition schema and the secret rules cannot grow a case for one.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const NAMES: readonly string[] = STEP_MODULES.map((m) => m.type);

/** Where step types may be named: their modules and the registry. */
const STEP_MODULES_DIR = 'shared/engine/steps/';
/** Files left out, and why. */
const EXCLUDED: Record<string, string> = {
  // Demo data: the workflow `npm start` seeds, written out as a user writes a definition.
  'infra/local/seed.ts': 'demo data',
};
/** A literal that is a step type's name but means something else there. */
const OTHER_MEANINGS: Record<string, string[]> = {
  // The artifact item's entity type (every item has one), not the step type.
  'shared/db/entities/artifact.ts': ['artifact'],
};

const isTypeName = (n: ts.Node) =>
  (ts.isPropertyAccessExpression(n) && n.name.text === 'type') || (ts.isIdentifier(n) && n.text === 'type');
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

/**
 * The step type names a source text names as string literals (comments and messages do not count).
 * A name with an underscore (`http_request`) counts wherever it is a whole literal; a plain word
 * (`set`, `fail`, `delay`), which other things are called too, where it stands for a step type: compared
 * with a `type`, as a `type:` property, a `case` of a switch on a `type`, or a `literal(...)`.
 */
function stepTypeLiterals(source: string, names: readonly string[], file = 'sample.ts'): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const typeContext = (lit: ts.Node): boolean => {
    const p = lit.parent;
    if (ts.isBinaryExpression(p) && EQUALITY.has(p.operatorToken.kind)) return isTypeName(p.left === lit ? p.right : p.left);
    if (ts.isPropertyAssignment(p) && p.initializer === lit) return ts.isIdentifier(p.name) && p.name.text === 'type';
    if (ts.isCaseClause(p)) return isTypeName(p.parent.parent.expression);
    if (ts.isCallExpression(p)) {
      const callee = p.expression;
      return (ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '') === 'literal';
    }
    return false;
  };
  const visit = (n: ts.Node) => {
    if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && names.includes(n.text)) {
      if (n.text.includes('_') || typeContext(n)) {
        const { line } = sf.getLineAndCharacterOfPosition(n.getStart(sf));
        found.push(`${file}:${line + 1} '${n.text}'`);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'cdk.out' ? [] : sourceFiles(path);
    return /\.(ts|tsx|mts|cts)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('the step type scanner', () => {
  it('finds a step type named in a type check, a case, a type property, a literal, and an underscored name anywhere', () => {
    const sample = [
      "if (step.type === 'delay') wait();",
      "if ('switch' !== s.type) go();",
      'switch (s.type) {',
      "  case 'set':",
      '    break;',
      '}',
      "const request = { id: 'x', type: 'artifact' };",
      "const Schema = z.literal('fail');",
      "const kinds = ['wait_for_callback'];",
      'const t = `for_each`;',
    ].join('\n');
    expect(stepTypeLiterals(sample, NAMES)).toEqual([
      "sample.ts:1 'delay'",
      "sample.ts:2 'switch'",
      "sample.ts:4 'set'",
      "sample.ts:7 'artifact'",
      "sample.ts:8 'fail'",
      "sample.ts:9 'wait_for_callback'",
      "sample.ts:10 'for_each'",
    ]);
  });

  it('leaves the same words alone where they mean something else, and comments and messages', () => {
    const sample = [
      "if (rule === 'fail') stop();",
      "const OnTimeout = z.enum(['fail', 'continue']);",
      "const header = 'set';",
      '// an http_request step, `for_each` too',
      "const message = 'a for_each cannot contain a for_each';",
    ].join('\n');
    expect(stepTypeLiterals(sample, NAMES)).toEqual([]);
  });
});

describe('the step registry', () => {
  it('lists each step type once, and the definition schema accepts exactly those', () => {
    expect(new Set(NAMES).size).toBe(NAMES.length);
    expect(Step.options.map((o) => o.shape.type.value).sort()).toEqual([...NAMES].sort());
  });

  it('no source file outside the step modules and the registry names a step type', () => {
    const files = ['shared', 'functions', 'infra'].flatMap(sourceFiles).filter((f) => !f.startsWith(STEP_MODULES_DIR) && !EXCLUDED[f]);
    expect(files.length).toBeGreaterThan(200);
    const found = files.flatMap((f) => {
      const other = OTHER_MEANINGS[f] ?? [];
      return stepTypeLiterals(readFileSync(join(ROOT, f), 'utf8'), NAMES, relative(ROOT, join(ROOT, f))).filter(
        (hit) => !other.some((name) => hit.endsWith(` '${name}'`)),
      );
    });
    expect(found).toEqual([]);
  });

  it('the shared example definition uses every step type', () => {
    const def = WorkflowDefinition.parse(exampleDefinition());
    expect([...new Set(everyStep(def).map((s) => s.type))].sort()).toEqual([...NAMES].sort());
  });

  it("the shapes the notifications path reads (every-step.ts) are the registry's: containers hold `steps`, steps that ask people have `reviewers`", () => {
    const def = WorkflowDefinition.parse(exampleDefinition());
    for (const s of everyStep(def)) {
      const m = moduleOf(s.type);
      expect(nestedOf(s).length > 0, s.type).toBe(isContainerType(s.type));
      expect(asksPeople(s), s.type).toBe(m?.asksPeople === true);
    }
    for (const option of Step.options) {
      const m = moduleOf(option.shape.type.value);
      expect('steps' in option.shape, m?.type).toBe(isContainerType(m?.type));
      expect('reviewers' in option.shape, m?.type).toBe(m?.asksPeople === true);
    }
  });

  it("a module's `request` names where its step's url, headers and body are", () => {
    const def = WorkflowDefinition.parse(exampleDefinition());
    const senders = everyStep(def).filter((s) => moduleOf(s.type)?.request);
    expect(senders.length).toBeGreaterThanOrEqual(2);
    for (const s of senders) {
      let at: unknown = s;
      for (const k of moduleOf(s.type)?.request ?? []) at = (at as Record<string, unknown>)[k];
      expect(at, s.type).toMatchObject({ url: expect.any(String) });
    }
  });
});
