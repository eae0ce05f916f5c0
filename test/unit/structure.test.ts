import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { dataLayerBreaches } from '../support/data-layer.ts';

/**
 * The import graph of the source tree (shared/, functions/, infra/; tests excluded), read with the
 * TypeScript compiler's own import scanner. Layers, bottom to top: a file may import its own layer
 * and the layers below, never one above, and no files import each other in a circle.
 * docs/architecture.md draws the same picture.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['shared/*.ts', 'shared/egress/'], // base: config, errors, ids, logger, clients, the SSRF policy
  ['shared/db/'], // entities, keys, item types, the lists of kinds (events, channels)
  ['shared/channels/', 'shared/schedules/'], // channel adapters (render, send, update), schedule expressions
  ['shared/engine/'], // the run: definition, step modules, the loop, waits, recovery
  ['shared/schemas/'], // request and response bodies
  ['shared/domain/'], // use cases
  ['shared/notifications/'], // approval messages, recipients, deliveries: orchestration of channels
  ['shared/http/'], // the middy stack, pages, problem mapping
  ['shared/console/'], // the console's pages: session cookie, CSRF, the document and its components
  ['functions/'], // handlers, the route table, workers
  ['cli/'], // flowgate, the workflows-as-code command (docs/workflows-as-code.md); the stack checks its folder with it
  ['infra/'], // CDK and the local stack
];

const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE = /\.(ts|tsx|mts|cts)$/;

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'cdk.out' ? [] : files(path);
    return SOURCE.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

function layerOf(file: string): number {
  const rank = LAYERS.findIndex((layer) => layer.some((p) => (p.endsWith('*.ts') ? dirname(file) === p.slice(0, -5) : file.startsWith(p))));
  if (rank < 0) throw new Error(`${file} is in no layer: add its folder to LAYERS`);
  return rank;
}

/** file → the source files it imports (relative imports only; packages are not ours). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of ['shared', 'functions', 'infra', 'cli'].flatMap(files)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
    const targets = importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(ROOT, resolve(ROOT, dirname(file), spec)))
      .filter((target) => SOURCE.test(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan): each is an import loop. */
function loops(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
        onStack.delete(w);
        component.push(w);
      }
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph of shared/, functions/ and infra/', () => {
  const graph = importGraph();

  it('reads a real graph (a check that finds nothing must have looked)', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('functions/routes.ts')?.length).toBeGreaterThan(50);
    expect(
      loops(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
  });

  it('has no import loops', () => {
    expect(loops(graph)).toEqual([]);
  });

  it('imports only downward: no file imports a layer above its own', () => {
    const upward = [...graph].flatMap(([from, targets]) =>
      targets.filter((to) => layerOf(to) > layerOf(from)).map((to) => `${from} -> ${to}`),
    );
    expect(upward).toEqual([]);
  });
});

describe('module size', () => {
  it('keeps every source file of shared/, functions/ and infra/ at 300 lines or fewer', () => {
    const long = ['shared', 'functions', 'infra', 'cli']
      .flatMap(files)
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 300);
    expect(long).toEqual([]);
  });
});

/**
 * The data layer is sealed: only shared/db/ builds DynamoDB requests (commands, expressions, keys);
 * the domain and the engine call entity functions named for what they do
 * (docs/architecture.md "Layers"). test/support/data-layer.ts says what a breach is.
 */
describe('the sealed data layer', () => {
  // The console's asset bodies are served text (minified CSS and browser scripts: the editor's CodeMirror), not server code.
  const outsideDb = ['shared', 'functions']
    .flatMap(files)
    .filter((f) => !f.startsWith('shared/db/') && f !== 'shared/console/asset-bodies.generated.ts');
  const breaches = (file: string) => dataLayerBreaches(file, readFileSync(join(ROOT, file), 'utf8'));

  it('finds no DynamoDB command, expression or key built outside shared/db', () => {
    const found = outsideDb.flatMap((f) => breaches(f).map((b) => `${f}:${b.line} ${b.kind}: ${b.text}`));
    expect(found).toEqual([]);
  });

  /** The console's files (its pages, and shared/console/) that import shared/db/ in an import graph: none may. */
  const isConsole = (file: string) => file.startsWith('functions/http/console/') || file.startsWith('shared/console/');
  const consoleReadingDb = (g: Map<string, string[]>) =>
    [...g]
      .filter(([from, to]) => isConsole(from) && to.some((t) => t.startsWith('shared/db/')))
      .map(([from]) => from)
      .sort();

  it('finds no console file (functions/http/console/, shared/console/) importing shared/db: the console reads through the domain', () => {
    const graph = importGraph();
    expect([...graph.keys()].filter(isConsole).length).toBeGreaterThan(100);
    expect(graph.get('functions/http/console/runs/run-view.tsx')).toContain('shared/domain/read-types.ts');
    expect(graph.get('shared/console/run-timeline.ts')).toContain('shared/domain/read-types.ts');
    expect(consoleReadingDb(graph)).toEqual([]);
  });

  it('would find one: a console file importing a type, a constant or a read of shared/db', () => {
    const graph = new Map([
      ['functions/http/console/runs/run-view.tsx', ['shared/domain/read-types.ts', 'shared/db/entities/execution.ts']],
      ['functions/http/console/workflows/workflow.ts', ['shared/db/entities/user.ts']],
      ['functions/http/console/overview-view.tsx', ['shared/domain/run-list.ts']],
      ['shared/console/run-path.ts', ['shared/db/entities/run-events.ts']],
      ['shared/domain/read-types.ts', ['shared/db/entities/execution.ts']],
    ]);
    expect(consoleReadingDb(graph)).toEqual([
      'functions/http/console/runs/run-view.tsx',
      'functions/http/console/workflows/workflow.ts',
      'shared/console/run-path.ts',
    ]);
  });

  it('looks at real code: the data layer itself is full of what it finds elsewhere', () => {
    expect(breaches('shared/db/entities/execution-held.ts').map((b) => b.kind)).toEqual(
      expect.arrayContaining(['command', 'expression', 'key']),
    );
  });

  describe('its own check, on sample sources', () => {
    const kinds = (source: string) => dataLayerBreaches('shared/domain/sample.ts', source).map((b) => b.kind);

    it('finds a DynamoDB command imported', () => {
      expect(kinds("import { UpdateCommand } from '@aws-sdk/lib-dynamodb';")).toEqual(['command']);
      expect(kinds("import { type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';")).toEqual(['command']);
      expect(kinds("import { QueryCommand as Q } from '@aws-sdk/client-dynamodb';")).toEqual(['command']);
    });

    it('finds an expression: a request field, a condition, an update, an alias, the update builder', () => {
      expect(kinds('const u = { ConditionExpression: x };')).toEqual(['expression']);
      expect(kinds("const c = 'attribute_not_exists(PK)';")).toEqual(['expression']);
      expect(kinds("const c = { expression: '#status = :pending' };")).toEqual(['expression']);
      expect(kinds(`const c = \`#role = :r AND \${more}\`;`)).toEqual(['expression']);
      expect(kinds("const u = 'SET triggerContext = :t';")).toEqual(['expression']);
      expect(kinds("const names = { '#status': 'status' };")).toEqual(['expression']);
      expect(kinds("import { buildUpdate } from '../db/update.ts';")).toEqual(['expression']);
    });

    it('finds a key built by hand or by an entity key function imported', () => {
      expect(kinds('const k = { PK: a, SK: b };')).toEqual(['key', 'key']);
      expect(kinds(`const scope = \`SCH#\${id}\`;`)).toEqual(['key']);
      expect(kinds('const p = { TableName: t };')).toEqual(['key']);
      expect(kinds("import { executionKey, getExecution } from '../db/entities/execution.ts';")).toEqual(['key']);
    });

    it('passes code that asks entity functions, and comments, URLs and text that only look alike', () => {
      const clean = [
        "import { writeAll } from '../db/transact.ts';",
        "import { getApiKey } from '../db/entities/api-key.ts';",
        "import { artifactObjectKey } from '../db/entities/artifact.ts';",
        "import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';",
        "import type { AttributeValue } from '@aws-sdk/client-dynamodb';",
        '// a comment may say attribute_not_exists(PK) and #status = :pending',
        `const link = \`\${base}#deliveries\`;`,
        `const binding = \`approvals:\${id}\${all ? ':all' : ''}\`;`,
        'await writeAll([changeMemberItem(user, next), audited(p, action, object)]);',
      ].join('\n');
      expect(kinds(clean)).toEqual([]);
    });
  });
});
