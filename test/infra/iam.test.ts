import { readFileSync } from 'node:fs';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { type Worker, WORKERS } from '../../functions/bindings.ts';
import { routes } from '../../functions/routes.ts';
import { RouteFunction } from '../../infra/constructs/route-function.ts';
import { statementsOf } from '../../infra/iam.ts';
import { workerFunction } from '../../infra/local/lambda.ts';
import { functionOf } from '../../infra/local/server.ts';
import { FlowgateStack } from '../../infra/stack.ts';

/**
 * The local stack enforces each function's statements (infra/local/iam.ts) from the same data the CDK
 * stack builds its roles from (infra/iam.ts): here, every role of the synthesized template is exactly
 * the statements of the grants the local stack gives that function, no more and no less.
 */

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
// With the stack's workflows (docs/workflows-as-code.md), so that their function is covered too.
const stack = new FlowgateStack(app, 'flowgate-test', {
  stage: 'test',
  sesIdentity: 'example.com',
  workflows: { dir: 'docs/examples/workflows', account: 'acc_01jdz1aaaaaaaaaaaaaaaaaaaa' },
});
const functions = stack.node.findAll().filter((c): c is RouteFunction => c instanceof RouteFunction);
const templates = new Map<Stack, Template>();
const templateOf = (s: Stack) => templates.get(s) ?? templates.set(s, Template.fromStack(s)).get(s)!;
// Synthesize every stack first: cross-stack references resolve to parameters only once the app is prepared.
for (const f of functions) templateOf(Stack.of(f));

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
/** A statement as the (action, resource, condition) triples IAM evaluates, as text. */
const triples = (s: { Action: string | string[]; Resource: unknown; Condition?: unknown }) =>
  list(s.Action).flatMap((a) => list(s.Resource).map((r) => JSON.stringify([a, r, s.Condition ?? null])));

/** The role's statements in its stack's template, but writing its own log group (the runtime's, not the code's). */
function templateStatements(f: RouteFunction): string[] {
  const s = Stack.of(f);
  const role = s.getLogicalId(f.role!.node.defaultChild as CfnElement);
  const resources = templateOf(s).toJSON().Resources as Record<string, { Type: string; Properties: any }>;
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === role))
    .flatMap((r) => list<Statement>(r.Properties.PolicyDocument.Statement))
    .filter((st) => !list(st.Action).every((a) => a.startsWith('logs:')))
    .flatMap(triples);
}

/** The statements of what the function was bound to, as its stack writes them. */
function boundStatements(f: RouteFunction): string[] {
  const s = Stack.of(f);
  return f.bindings.flatMap(({ grants, arns }) =>
    statementsOf(grants, arns).flatMap((st) =>
      triples(s.resolve({ Action: [...st.actions], Resource: [...st.resources], ...(st.conditions && { Condition: st.conditions }) })),
    ),
  );
}

/** The grants the local stack invokes the function with (the local server's and workers' own lookups). */
function localGrants(handler: string) {
  if (handler in WORKERS) return workerFunction(handler as Worker, 1).grants;
  const route = routes.find((r) => r.handler === handler);
  if (!route && handler !== 'http/fallback') throw new Error(`${handler}: neither a route, a worker nor the fallback`);
  return functionOf(route).grants;
}

describe('IAM: the template and the local enforcement are one source', () => {
  it('covers every function of the stack: each route, the fallback and each worker', () => {
    const handlers = new Set(functions.map((f) => f.handler));
    expect(handlers.size).toBe(functions.length);
    for (const r of routes) expect(handlers.has(r.handler), r.handler).toBe(true);
    for (const w of Object.keys(WORKERS)) expect(handlers.has(w), w).toBe(true);
    expect(handlers.has('http/fallback')).toBe(true);
  });

  it.each(functions.map((f) => [f.handler, f] as const))('%s: its role is exactly the statements of its local grants', (handler, f) => {
    expect([...f.bindings.flatMap((b) => b.grants)].sort()).toEqual([...(localGrants(handler) ?? [])].sort());
    expect(new Set(templateStatements(f))).toEqual(new Set(boundStatements(f)));
  });
});

describe("the stack's workflows (docs/workflows-as-code.md)", () => {
  it('are a custom resource backed by code/apply, carrying the folder checked at synth and the account', () => {
    const resources = templateOf(stack).findResources('Custom::FlowgateWorkflows');
    const [resource] = Object.values(resources) as { Properties: Record<string, any> }[];
    expect(Object.keys(resources)).toHaveLength(1);
    expect(resource?.Properties).toMatchObject({ Account: 'acc_01jdz1aaaaaaaaaaaaaaaaaaaa', Prune: 'false' });
    const folder = JSON.parse(resource?.Properties.Workflows);
    expect(folder.map((w: { key: string }) => w.key)).toEqual(['deploy-approval']);
    expect(folder[0].settings).toMatchObject({
      name: 'Deploy with approval',
      recovery: false,
      origin: expect.stringMatching(/^cdk deploy flowgate-test: /),
    });
  });
});
