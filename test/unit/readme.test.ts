import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testWorkflow } from '../../shared/domain/workflow-tests.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { Step } from '../../shared/engine/steps/index.ts';

const root = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const workflows = read('docs/workflows.md');
const block = (name: string) =>
  new RegExp(`<!-- ${name}: start -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}: end -->`).exec(workflows)?.[1];

describe('docs/workflows.md', () => {
  it('has a definition example that the server accepts, with every step type once', () => {
    const example = JSON.parse(block('definition example') as string);
    const parsed = WorkflowDefinition.safeParse(example);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const types = (example.steps as { type: string }[]).map((s) => s.type).sort();
    expect(types).toEqual(Step.options.map((o) => o.shape.type.value).sort());
  });
});

describe('README and docs/', () => {
  it('point to no design handout the repository does not have', () => {
    for (const page of [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ])
      expect(read(page), page).not.toMatch(/ARCHITECTURE\.md|API\.md|WORKFLOWS\.md/);
  });
});

describe('docs/workflows.md control flow examples', () => {
  // From "Control flow" to the end of "Callbacks": the sections of the step constructs.
  const start = workflows.indexOf('\n## Control flow\n');
  const callbacks = workflows.indexOf('\n## Callbacks\n');
  const end = workflows.indexOf('\n## ', callbacks + 1);
  const section = workflows.slice(start, end < 0 ? undefined : end);
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

describe('docs/first-workflow.md', () => {
  const tutorial = read('docs/first-workflow.md');
  const definition = JSON.parse(
    /<!-- tutorial definition: start -->\s*```json\n([\s\S]*?)```\s*<!-- tutorial definition: end -->/.exec(tutorial)?.[1] as string,
  );
  const run = (input: Record<string, unknown>) => testWorkflow('acc_01jdz1aaaaaaaaaaaaaaaaaaaa', { definition, input, mocks: {} });

  it('has a definition the server accepts, whose test runs end as the tutorial says they do', async () => {
    const parsed = WorkflowDefinition.safeParse(definition);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const small = await run({ customer: 'Ada', amount: 20 });
    expect(small).toMatchObject({ status: 'SUCCEEDED', path: ['greet', 'size', 'accept'] });
    expect(tutorial).toContain('**SUCCEEDED**, along the path\n  `greet → size → accept`');
    const large = await run({ customer: 'Ada', amount: 500 });
    expect(large).toMatchObject({ status: 'FAILED', path: ['greet', 'size', 'approve'], error: { code: 'MOCK_MISSING' } });
    expect(tutorial).toContain('`greet → size → approve`');
  });
});
