import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Step, WorkflowDefinition } from '../../shared/engine/definition.ts';

const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
const block = (name: string) =>
  new RegExp(`<!-- ${name}: start -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}: end -->`).exec(readme)?.[1];

describe('README', () => {
  it('has a definition example that the server accepts, with every step type once', () => {
    const example = JSON.parse(block('definition example') as string);
    const parsed = WorkflowDefinition.safeParse(example);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const types = (example.steps as { type: string }[]).map((s) => s.type).sort();
    expect(types).toEqual(Step.options.map((o) => o.shape.type.value).sort());
  });

  it('points to no file the repository does not have', () => {
    expect(readme).not.toMatch(/API\.md|WORKFLOWS\.md/);
  });
});
