import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { Step } from '../../shared/engine/steps/index.ts';

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

describe('README control flow examples', () => {
  const section = readme.slice(readme.indexOf('**Control flow.**'), readme.indexOf('**Cancel**'));
  const examples = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] as string));

  it('has one example per construct, each a definition the server accepts or a step its schema accepts', () => {
    // next (with maxStepExecutions), switch, for_each, onError, $trigger; step retries, callbacks.
    expect(examples).toHaveLength(7);
    for (const example of examples) {
      const parsed = 'type' in example ? Step.safeParse(example) : WorkflowDefinition.safeParse(example);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    }
  });
});
