import fc from 'fast-check';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { type Box, layoutGraph } from '../../shared/console/graph-layout.ts';
import { edgeKey, GraphTable, graphEdges, WorkflowGraph, workflowGraph } from '../../shared/console/graph.tsx';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { exampleDefinition } from '../support/definitions.ts';

/**
 * The workflow graph of the console (issue 33): the model (a node per step, an edge per way a run
 * goes on, a `for_each` body as a group), its drawing (an inline SVG, text escaped, no style
 * attribute, the run's path marked) and its layout (nothing drawn over anything else).
 */

/** Every control-flow construct once: order, `next`, a switch's cases and default, `onError` both ways, a loop. */
const FLOW = {
  steps: [
    { id: 'prepare', type: 'set', values: { n: 1 } },
    {
      id: 'route',
      type: 'switch',
      cases: [
        { when: '{% $vars.amount > 100 %}', next: 'guard' },
        { when: "{% $vars.env = 'staging' %}", next: '$end' },
      ],
      default: 'regions',
    },
    {
      id: 'regions',
      type: 'for_each',
      items: "{% ['eu', 'us'] %}",
      onError: { next: 'recover' },
      steps: [
        { id: 'ping', type: 'http_request', url: 'https://ops.example/health', onError: 'continue' },
        { id: 'check', type: 'switch', cases: [{ when: '{% $item = "eu" %}', next: 'log' }], default: '$end' },
        { id: 'log', type: 'set', values: { seen: '{% $item %}' } },
      ],
    },
    { id: 'done', type: 'set', values: { ok: true }, next: '$end' },
    { id: 'recover', type: 'set', values: { ok: false } },
    { id: 'guard', type: 'fail', message: 'Too large', when: '{% $vars.amount > 100 %}' },
  ],
};

const html = (vnode: ReturnType<typeof WorkflowGraph>) => renderToString(vnode);
const edges = (def: { steps: any[] }) => Object.fromEntries(graphEdges(def).map((e) => [e.key, { kinds: e.kinds, label: e.label }]));

describe('the graph of a definition', () => {
  it('the test definitions are valid definitions', () => {
    expect(WorkflowDefinition.safeParse(FLOW).error?.issues).toBeUndefined();
    expect(WorkflowDefinition.safeParse(exampleDefinition()).error?.issues).toBeUndefined();
  });

  it('has a node per step (nested ones too, in their loop), with the run’s start and end', () => {
    const g = workflowGraph(FLOW as any);
    expect(g.nodes.map((n) => n.id)).toEqual([
      '$start',
      'prepare',
      'route',
      'regions',
      'ping',
      'check',
      'log',
      'done',
      'recover',
      'guard',
      '$end',
    ]);
    expect(g.nodes.find((n) => n.id === 'check')).toMatchObject({ kind: 'step', type: 'switch', loop: 'regions' });
    expect(g.groups).toEqual([{ loop: 'regions', steps: ['ping', 'check', 'log'] }]);
  });

  it('has an edge for order, next, each case (labelled), default, onError, a loop’s body and a skip', () => {
    expect(edges(FLOW)).toEqual({
      '$start->prepare': { kinds: ['start'], label: undefined },
      'prepare->route': { kinds: ['order'], label: undefined },
      // A switch goes where its cases say, never to the following step.
      'route->guard': { kinds: ['case'], label: 'case 1' },
      'route->$end': { kinds: ['case'], label: 'case 2' },
      'route->regions': { kinds: ['default'], label: 'default' },
      // The loop: into its body, back for the next item, on when done; its onError elsewhere.
      'regions->ping': { kinds: ['each'], label: 'each item' },
      'ping->check': { kinds: ['order', 'error'], label: 'also on error' },
      'check->log': { kinds: ['case'], label: 'case 1' },
      'check->$end': { kinds: ['default'], label: 'default' },
      'log->regions': { kinds: ['repeat'], label: 'next item' },
      'regions->done': { kinds: ['done'], label: 'all items done' },
      'regions->recover': { kinds: ['error'], label: 'on error' },
      // `next` jumps; the step after `done` is not where it goes.
      'done->$end': { kinds: ['next'], label: undefined },
      'recover->guard': { kinds: ['order'], label: undefined },
      // A fail step ends the run when it runs; skipped, it goes on.
      'guard->$end': { kinds: ['skip'], label: 'skipped' },
    });
    expect(graphEdges(FLOW as any).find((e) => e.key === 'route->guard')?.detail).toBe('case 1: $vars.amount > 100');
    expect(edgeKey('a', 'b')).toBe('a->b');
  });

  it('merges two cases that go to the same step into one edge, and draws a jump back and a jump to itself', () => {
    const def = {
      steps: [
        { id: 'poll', type: 'http_request', url: 'https://ci.example/jobs/1', onError: { next: 'poll' } },
        { id: 'finished', type: 'switch', cases: [{ when: '{% true %}', next: 'report' }], default: 'report', onError: 'continue' },
        { id: 'wait', type: 'delay', seconds: 30, next: 'poll' },
        { id: 'report', type: 'set', values: {} },
      ],
    };
    expect(WorkflowDefinition.safeParse(def).error?.issues).toBeUndefined();
    expect(edges(def)).toMatchObject({
      'poll->poll': { kinds: ['error'], label: 'on error' },
      'finished->report': { kinds: ['case', 'default'], label: 'case 1, default' },
      // A switch that fails on ("continue") goes to the following step.
      'finished->wait': { kinds: ['error'], label: 'on error' },
      'wait->poll': { kinds: ['next'] },
    });
    const svg = html(WorkflowGraph({ definition: def as any }));
    expect(svg.match(/class="edge"/g)).toHaveLength(graphEdges(def as any).length);
  });
});

describe('the drawing', () => {
  it('is an svg image with a node per step: its title, its id and type written on it; the loop’s body in a labelled group', () => {
    const svg = html(WorkflowGraph({ definition: FLOW as any }));
    // In a region that scrolls sideways (keyboard-reachable) on a narrow screen, named as the drawing.
    expect(svg).toMatch(
      /^<section class="svg-scroll" tabindex="0" aria-label="Workflow graph: 9 steps, from start to end"><svg class="graph" role="img" aria-label="Workflow graph: 9 steps, from start to end"/,
    );
    for (const id of ['prepare', 'route', 'regions', 'ping', 'check', 'log', 'done', 'recover', 'guard']) {
      expect(svg).toContain(`<text x="`);
      expect(svg, id).toMatch(new RegExp(`<g class="node type-[a-z_]+" data-step="${id}"><title>${id} \\(`));
      expect(svg, id).toMatch(new RegExp(`class="step-id">${id}</text>`));
    }
    expect(svg.match(/<g class="node /g)).toHaveLength(11);
    expect(svg).toContain('>Start</text>');
    expect(svg).toContain('>End</text>');
    expect(svg).toMatch(
      /<g class="group"><title>for_each regions: its steps run once per item<\/title><rect [^>]+><\/rect><text [^>]+>for_each regions<\/text>/,
    );
    for (const label of ['case 1', 'case 2', 'default', 'each item', 'next item', 'all items done', 'on error', 'also on error', 'skipped'])
      expect(svg, label).toContain(`>${label}</text>`);
    expect(svg).toContain('<title>route → guard: case 1: $vars.amount > 100</title>');
    expect(svg).toMatch(/viewBox="0 0 \d+ \d+" width="\d+" height="\d+"/);
    // The CSP allows no style attribute.
    expect(svg).not.toMatch(/\sstyle=/);
  });

  it('marks the path a run took, and nothing else', () => {
    const taken = {
      steps: new Set(['$start', 'prepare', 'route', 'regions']),
      edges: new Set(['$start->prepare', 'prepare->route', 'route->regions']),
    };
    const svg = html(WorkflowGraph({ definition: FLOW as any, taken }));
    expect([...svg.matchAll(/<g class="node [^"]*taken" data-step="([^"]+)"/g)].map((m) => m[1])).toEqual([
      '$start',
      'prepare',
      'route',
      'regions',
    ]);
    expect([...svg.matchAll(/<g class="edge-route taken" data-edge="([^"]+)"/g)].map((m) => m[1])).toEqual([
      '$start->prepare',
      'prepare->route',
      'route->regions',
    ]);
    expect(svg.match(/<path class="edge taken"/g)).toHaveLength(3);
    expect(svg.match(/<path class="arrow taken"/g)).toHaveLength(3);
    expect(html(WorkflowGraph({ definition: FLOW as any }))).not.toContain('taken');
  });

  it('writes step ids, titles and conditions as text: markup in them is never markup', () => {
    const xss = '<img src=x onerror=alert(1)>';
    const def = {
      steps: [
        { id: xss, type: 'set', title: '</title><script>alert(1)</script>', values: {} },
        { id: 'r', type: 'switch', cases: [{ when: `{% "${xss}" %}`, next: xss }], default: '$end' },
        { id: '"><svg onload=alert(1)>', type: 'for_each', items: '{% [] %}', steps: [{ id: '<b>x</b>', type: 'set', values: {} }] },
      ],
    };
    const svg = html(WorkflowGraph({ definition: def as any })) + renderToString(GraphTable({ definition: def as any }));
    expect(svg).not.toMatch(/<img|<script|<svg onload|<b>/i);
    expect(svg).toContain('&lt;img src=x onerror=alert(1)>');
    expect(svg).toContain('&lt;/title>&lt;script>alert(1)&lt;/script>');
    expect(svg).toContain('data-step="&quot;>&lt;svg onload=alert(1)>"');
  });

  it('is a pure function of its input (the same definition, the same drawing)', () => {
    const a = html(WorkflowGraph({ definition: exampleDefinition() }));
    const b = html(WorkflowGraph({ definition: exampleDefinition() }));
    expect(a).toBe(b);
  });

  it('the table says the same: each step, its type, its loop, where a run goes from it', () => {
    const table = renderToString(GraphTable({ definition: FLOW as any }));
    expect(table).toContain('<caption>Steps and where a run goes from each</caption>');
    expect(table).toContain(
      `<th scope="row">route</th><td>switch</td><td></td><td>guard (case 1: $vars.amount > 100) · End (case 2: $vars.env = 'staging') · regions (default)</td>`,
    );
    expect(table).toContain('<th scope="row">log</th><td>set</td><td>regions</td><td>regions (next item)</td>');
  });
});

/** Boxes that overlap (touching is not overlapping). */
const overlap = (a: Box, b: Box) =>
  Math.abs(a.x - b.x) * 2 < a.width + b.width - 0.5 && Math.abs(a.y - b.y) * 2 < a.height + b.height - 0.5;
const inside = (inner: Box, outer: Box) =>
  inner.x - inner.width / 2 >= outer.x - outer.width / 2 - 0.5 &&
  inner.x + inner.width / 2 <= outer.x + outer.width / 2 + 0.5 &&
  inner.y - inner.height / 2 >= outer.y - outer.height / 2 - 0.5 &&
  inner.y + inner.height / 2 <= outer.y + outer.height / 2 + 0.5;

/** Random definitions: top-level steps that jump anywhere (switches, next, onError), some of them loops with bodies that do the same. */
const anyDefinition = fc.integer({ min: 1, max: 14 }).chain((n) =>
  fc
    .tuple(
      ...Array.from({ length: n }, (_, i) =>
        fc.record({
          kind: fc.constantFrom('set', 'switch', 'loop', 'fail'),
          jumps: fc.array(fc.integer({ min: -1, max: n - 1 }), { maxLength: 3 }),
          onError: fc.option(fc.integer({ min: -1, max: n - 1 }), { nil: undefined }),
          body: fc.array(fc.array(fc.integer({ min: -1, max: 3 }), { maxLength: 2 }), { minLength: 1, maxLength: 4 }),
          i: fc.constant(i),
        }),
      ),
    )
    .map((specs) => ({
      steps: specs.map((s) => {
        const top = (j: number) => (j < 0 ? '$end' : `s${j}`);
        const base = { id: `s${s.i}`, ...(s.onError !== undefined ? { onError: { next: top(s.onError) } } : {}) };
        if (s.kind === 'switch')
          return {
            ...base,
            type: 'switch',
            cases: s.jumps.length ? s.jumps.map((j) => ({ when: true, next: top(j) })) : [{ when: true, next: '$end' }],
          };
        if (s.kind === 'fail') return { ...base, type: 'fail', message: 'no' };
        if (s.kind === 'loop')
          return {
            ...base,
            type: 'for_each',
            items: '{% [] %}',
            steps: s.body.map((jumps, j) => {
              const nested = (k: number) => (k < 0 ? '$end' : `s${s.i}n${Math.min(k, s.body.length - 1)}`);
              const id = `s${s.i}n${j}`;
              return jumps.length
                ? { id, type: 'switch', cases: jumps.map((k) => ({ when: true, next: nested(k) })) }
                : { id, type: 'set', values: {} };
            }),
          };
        return { ...base, type: 'set', values: {}, ...(s.jumps[0] !== undefined ? { next: top(s.jumps[0]) } : {}) };
      }),
    })),
);

describe('the layout', () => {
  it('of any definition: every node placed once, no two overlapping, a loop’s body inside its box and nothing else in it, every route finite and inside the drawing', () => {
    fc.assert(
      fc.property(anyDefinition, (def) => {
        expect(WorkflowDefinition.safeParse(def).error?.issues).toBeUndefined();
        const model = workflowGraph(def as any);
        const nodes = model.nodes.map((n) => ({ id: n.id, width: n.kind === 'step' ? 100 : 60, height: n.kind === 'step' ? 44 : 28 }));
        const layout = layoutGraph(
          nodes,
          model.edges.map((e) => ({ id: e.key, from: e.from, to: e.to, ...(e.label ? { label: { width: 50, height: 16 } } : {}) })),
          model.groups.map((g) => ({ id: g.loop, members: g.steps, label: { width: 80, height: 16 } })),
        );
        const boxes = nodes.map((n) => layout.nodes.get(n.id) as Box);
        expect(boxes.every((b) => b && Number.isFinite(b.x) && Number.isFinite(b.y))).toBe(true);
        for (let i = 0; i < boxes.length; i++)
          for (let j = i + 1; j < boxes.length; j++)
            expect(overlap(boxes[i] as Box, boxes[j] as Box), `${nodes[i]?.id} and ${nodes[j]?.id}`).toBe(false);
        const drawing = { x: layout.width / 2, y: layout.height / 2, width: layout.width, height: layout.height };
        for (const b of boxes) expect(inside(b, drawing)).toBe(true);
        for (const g of model.groups) {
          const box = layout.groups.get(g.loop) as Box;
          expect(inside(box, drawing)).toBe(true);
          for (const n of model.nodes) {
            const b = layout.nodes.get(n.id) as Box;
            if (g.steps.includes(n.id)) expect(inside(b, box), n.id).toBe(true);
            else expect(overlap(b, box), `${n.id} over the box of ${g.loop}`).toBe(false);
          }
        }
        expect(layout.edges.size).toBe(model.edges.length);
        for (const [key, route] of layout.edges) {
          expect(route.points.length, key).toBeGreaterThanOrEqual(2);
          for (const p of route.points) {
            expect(Number.isFinite(p.x) && Number.isFinite(p.y), key).toBe(true);
            expect(p.x >= -0.5 && p.x <= layout.width + 0.5 && p.y >= -0.5 && p.y <= layout.height + 0.5, key).toBe(true);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('draws the definition of 100 steps with a loop of 100 in well under a page view’s time', () => {
    const def = {
      steps: [
        ...Array.from({ length: 98 }, (_, i) => ({
          id: `s${i}`,
          type: 'set',
          values: {},
          ...(i % 7 === 3 ? { next: `s${Math.max(0, i - 5)}` } : {}),
        })),
        {
          id: 'loop',
          type: 'for_each',
          items: '{% [] %}',
          steps: Array.from({ length: 100 }, (_, i) => ({ id: `n${i}`, type: 'set', values: {} })),
        },
        { id: 'last', type: 'set', values: {} },
      ],
    };
    expect(WorkflowDefinition.safeParse(def).error?.issues).toBeUndefined();
    const started = performance.now();
    const svg = html(WorkflowGraph({ definition: def as any }));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(svg.match(/<g class="node /g)).toHaveLength(202);
  });
});
