import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { ALARMS } from '../../infra/constructs/alarms.ts';
import { ROUTES_PER_NESTED_STACK, WHOLE_ROUTES_PER_NESTED_STACK } from '../../infra/constructs/api.ts';
import { ROUTES_IN_STACK } from '../../infra/constructs/placement.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { ownFunctions, templatesOf } from '../support/template.ts';

/**
 * The figures docs/deploying.md gives of the stack are read from the stack: a page that says
 * "there are 56 functions" when synth builds 78 fails here (it did, for a release).
 */
const page = readFileSync(new URL('../../docs/deploying.md', import.meta.url), 'utf8');
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

const WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];
/** A number as the page writes it: digits, or a word up to twenty. */
const numberOf = (text: string) => (/^\d+$/.test(text) ? Number(text) : WORDS.indexOf(text.toLowerCase()));
/** The number the page writes where `pattern` (with one group for it) matches; fails when the page has no such sentence. */
function figure(pattern: RegExp): number {
  const m = pattern.exec(page.replace(/\s+/g, ' '));
  expect(m, `docs/deploying.md has no sentence matching ${pattern}`).not.toBeNull();
  return numberOf((m as RegExpExecArray)[1] as string);
}

/** The stack as synth builds it (without bundling), once for the tests that read it. */
const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
const built = templatesOf(new FlowgateStack(app, 'flowgate-docs', { stage: 'docs' }));

describe('docs/deploying.md figures', () => {
  it('reads numbers as the page writes them', () => {
    expect([numberOf('78'), numberOf('fifteen'), numberOf('Twelve'), numberOf('many')]).toEqual([78, 15, 12, -1]);
  });

  it('gives the number of functions the stack synthesizes', () => {
    const { template, functions, auditEvents } = built;
    const count = ownFunctions(template).length + ownFunctions(functions).length + ownFunctions(auditEvents).length;
    expect(figure(/there are (\d+): one per route/)).toBe(count);
    expect(figure(/keep N × (\d+) well below/)).toBe(count);
  });

  it("gives the stack's resources and the routes kept in it", () => {
    const { template } = built;
    expect(figure(/the stack \((\d+) resources/)).toBe(Object.keys(template.toJSON().Resources).length);
    expect(figure(/The (\d+) routes of `ROUTES_IN_STACK`/)).toBe(ROUTES_IN_STACK.size);
    expect(figure(/whole in a nested stack of (\d+)/)).toBe(WHOLE_ROUTES_PER_NESTED_STACK);
  });

  it('gives the number of alarms, of routes per nested stack and of approval routes', () => {
    expect(figure(/the state of the (\w+) alarms below/)).toBe(Object.keys(ALARMS).length);
    expect(figure(/filled with (\d+) routes each/)).toBe(ROUTES_PER_NESTED_STACK);
    expect(figure(/functions stack holds (\d+) resources/)).toBe(5 * ROUTES_PER_NESTED_STACK);
    expect(figure(/resources and (\d+) outputs, and the stack/)).toBe(2 * ROUTES_PER_NESTED_STACK);
    expect(figure(/the (\w+) approval routes/)).toBe(routes.filter((r) => 'throttle' in r && r.throttle === 'approval').length);
  });
});
