import { readFileSync } from 'node:fs';
import { App, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { NESTED_STACKS, nestedStackOf, ROUTES_IN_STACK } from '../../infra/constructs/placement.ts';
import { type Route, routeKey } from '../../shared/http/route.ts';

/**
 * Item 2 of issue 43: where a route is deployed is pinned by name (infra/constructs/placement.ts),
 * never by its position in the route table. A route inserted in the middle of the table changes no
 * logical id, parameter or output of any template: it only adds its own resources.
 */

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

/**
 * A function version's logical id ends in a hash of the function's code and settings: without bundling
 * (here) the code's hash is new at every synth, so that tail is left out; its name part is compared.
 */
const stable = (id: string) => id.replace(/(CurrentVersion[0-9A-F]{8})[0-9a-f]{32,}$/, '$1');

/** Every template of the stack (itself, the nested stacks) as `<stack> <logical id>` lines: resources, parameters, outputs. */
async function synthesizedIds(): Promise<Map<string, string>> {
  const { FlowgateStack } = await import('../../infra/stack.ts');
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new FlowgateStack(app, 'flowgate-placement', { stage: 'test' });
  const stacks: Stack[] = [stack, ...stack.node.children.filter((c): c is NestedStack => c instanceof NestedStack)];
  const ids = new Map<string, string>();
  for (const s of stacks) {
    const json = Template.fromStack(s).toJSON();
    for (const part of ['Resources', 'Parameters', 'Outputs'] as const)
      for (const [id, value] of Object.entries((json[part] ?? {}) as Record<string, { Type?: string }>))
        ids.set(`${s.node.id} ${part} ${stable(id)}`, value.Type ?? '');
  }
  return ids;
}

/** A route of its own function; the module is a stand-in whose only use is to exist (no bundling here). */
const inserted: Route = {
  method: 'GET',
  path: '/api/inserted/{id}',
  handler: '../test/support/inserted-route',
  summary: 'A route inserted in the middle of the table',
  tag: 'Inserted',
  auth: { kind: 'session' },
  grants: ['table:read'],
};

describe('placement', () => {
  it('places every function of the route table in exactly one nested stack, and keeps only routes of the table in the stack', () => {
    const placed = NESTED_STACKS.flat();
    expect(new Set(placed).size).toBe(placed.length);
    for (const r of routes as readonly Route[]) expect(nestedStackOf(r.handler), r.handler).toBeGreaterThan(0);
    const keys = new Set((routes as readonly Route[]).map(routeKey));
    for (const k of ROUTES_IN_STACK) expect(keys.has(k), k).toBe(true);
    expect(() => nestedStackOf('http/nowhere')).toThrow(/http\/nowhere has no nested stack: add it at the end of the last list/);
  });

  it('a route inserted in the middle of the table changes no logical id: it adds its own resources only', async () => {
    const before = await synthesizedIds();
    vi.resetModules();
    vi.doMock('../../functions/routes.ts', async (original) => {
      const actual = await original<{ routes: readonly Route[] }>();
      const middle = Math.floor(actual.routes.length / 2);
      return { routes: [...actual.routes.slice(0, middle), inserted, ...actual.routes.slice(middle)] };
    });
    vi.doMock('../../infra/constructs/placement.ts', async (original) => {
      const actual = await original<typeof import('../../infra/constructs/placement.ts')>();
      const stacks = [...actual.NESTED_STACKS.slice(0, -1), [...(actual.NESTED_STACKS.at(-1) ?? []), inserted.handler]];
      return { ...actual, NESTED_STACKS: stacks, nestedStackOf: (h: string) => stacks.findIndex((s) => s.includes(h)) + 1 };
    });
    try {
      const after = await synthesizedIds();
      const gone = [...before.keys()].filter((id) => !after.has(id));
      const changedType = [...before].filter(([id, type]) => after.has(id) && after.get(id) !== type);
      expect(gone).toEqual([]);
      expect(changedType).toEqual([]);
      // Its function, role, policy, log group, invoke permission, API route and integration, in the last nested stack.
      const added = [...after].filter(([id]) => !before.has(id));
      const last = NESTED_STACKS.length === 1 ? 'RouteFunctions' : `RouteFunctions${NESTED_STACKS.length}`;
      expect(added.filter(([id]) => id.includes(' Resources ')).map(([id, type]) => [id.split(' ')[0], type])).toEqual(
        expect.arrayContaining(
          [
            'AWS::Lambda::Function',
            'AWS::IAM::Role',
            'AWS::IAM::Policy',
            'AWS::Logs::LogGroup',
            'AWS::Lambda::Permission',
            'AWS::ApiGatewayV2::Route',
            'AWS::ApiGatewayV2::Integration',
          ].map((type) => [last, type]),
        ),
      );
      expect(added.filter(([id]) => id.includes(' Resources ')).every(([id]) => id.startsWith(`${last} `))).toBe(true);
    } finally {
      vi.doUnmock('../../functions/routes.ts');
      vi.doUnmock('../../infra/constructs/placement.ts');
      vi.resetModules();
    }
  }, 120_000);
});
