import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { EVENT_TYPES } from '../../shared/db/event-types.ts';
import { openApiDocument } from '../../shared/http/openapi.ts';

const root = join(import.meta.dirname, '../..');
const sources = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );

describe('event types: one list', () => {
  it('has every type the engine emits: each newEvent(...) in the source names one of the list', () => {
    const emitted = new Set<string>();
    for (const file of [...sources('shared'), ...sources('functions')]) {
      const text = readFileSync(join(root, file), 'utf8');
      // newEvent(<executionId>, '<type>' or a conditional of two literals, ...
      for (const m of text.matchAll(/newEvent\(\s*[^,]+,\s*([^,]+),/g))
        for (const t of m[1]?.matchAll(/'([a-z]+\.[a-z]+)'/g) ?? []) emitted.add(t[1] as string);
      // ... and the engine's step-ending helpers that take the type as a parameter.
      for (const t of text.matchAll(/'(step\.(?:succeeded|failed))'/g)) emitted.add(t[1] as string);
      // ... and the waits the step modules return (`event: { type, data }`), whose event the step loop writes.
      for (const t of text.matchAll(/event: \{ type: '([a-z]+\.[a-z]+)'/g)) emitted.add(t[1] as string);
    }
    expect(emitted.size).toBeGreaterThan(10);
    for (const type of emitted) expect(EVENT_TYPES, type).toContain(type);
    expect([...emitted].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('lets a notification subscribe to every type, alone or all together', () => {
    const definition = (events: readonly string[]) => ({
      steps: [{ id: 'a', type: 'set', values: {} }],
      notifications: [{ url: 'https://hooks.example/x', events, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
    });
    for (const type of EVENT_TYPES) expect(WorkflowDefinition.safeParse(definition([type])).success, type).toBe(true);
    expect(WorkflowDefinition.safeParse(definition(EVENT_TYPES)).success).toBe(true);
    expect(WorkflowDefinition.safeParse(definition(['run.started'])).success).toBe(false);
  });

  it('is what the OpenAPI document lists for subscriptions and for the event log', () => {
    const text = JSON.stringify(openApiDocument(routes));
    const enums = [...text.matchAll(/"enum":\[("[a-z]+\.[a-z]+"(?:,"[a-z]+\.[a-z]+")*)\]/g)].map((m) => JSON.parse(`[${m[1]}]`));
    expect(enums.length).toBeGreaterThanOrEqual(2);
    for (const e of enums) expect(e).toEqual([...EVENT_TYPES]);
  });

  it('is the event table of docs/runs-and-events.md, row for row', () => {
    const readme = readFileSync(join(root, 'docs/runs-and-events.md'), 'utf8');
    const table = readme.slice(readme.indexOf('| `type` | written when | `data` |'));
    const rows = table
      .split('\n')
      .slice(2)
      .filter((l, i, all) => l.startsWith('|') && all.slice(0, i).every((x) => x.startsWith('|')));
    expect(rows.map((r) => /^\| `([^`]+)`/.exec(r)?.[1])).toEqual([...EVENT_TYPES]);
  });
});
