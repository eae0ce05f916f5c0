// A small layered layout (Sugiyama's method, kept to what a workflow's graph needs) for the console's
// workflow graph (./graph.tsx), in place of a layout library: dagre would add 47 KiB to every page
// route that draws a graph (the workflow page's bundle: 571 KiB with this, 607 KiB the routes' budget),
// the graph's model, layout and drawing together are 15 KiB. Top to bottom; deterministic.
//
// 1. Edges that go back in the given order of nodes (jumps back, a loop's "next item") are turned
//    around, so the rest is acyclic; they are drawn in their own direction in the end.
// 2. Layers: each node below all its predecessors (longest path); every edge spans two layers at
//    least, so there is a layer between any two nodes for an edge's label.
// 3. An edge over more than one layer gets a point (a zero-size node, or its label's box) in each
//    layer between: edges are routed around nodes, never through them.
// 4. Order in each layer: by the mean position of neighbours, swept down and up, the order with the
//    fewest crossings kept.
// 5. x: each node pulled toward its neighbours, the layer's order and spacing kept (isotonic
//    regression: the least squares placement that respects the order), swept a few times.
// 6. A group (a loop's body) is laid out first, on its own, with a port on its top or bottom for
//    each edge that leaves it; in the graph around it, it is one box, and its edges attach at its ports.

import { layered } from './graph-coordinates.ts';
import type { Attach, Box, LayoutEdge, LayoutNode, LayoutOptions, Point, Size } from './graph-layers.ts';

export type { Box, LayoutEdge, LayoutNode, LayoutOptions, Point, Size } from './graph-layers.ts';

/** Nodes drawn inside a box, with a label at its top (a node of the group's own, above the others). */
export type LayoutGroup = { id: string; members: string[]; label: Size };

export type Layout = {
  width: number;
  height: number;
  /** Centres and sizes. */
  nodes: Map<string, Box>;
  /** Each edge's route, from its `from` to its `to`, and where its label's centre is. */
  edges: Map<string, { points: Point[]; label?: Point }>;
  groups: Map<string, Box & { label: Point }>;
};

const DEFAULTS: LayoutOptions = { nodeSep: 28, edgeSep: 14, rankSep: 40, margin: 12, groupPadding: 10, tall: 80 };

/**
 * The layout of a graph whose nodes are `nodes` in their order (edges to an earlier node are drawn
 * as going back), some of them in `groups` (each drawn as a box; a group's edges to outside nodes
 * leave it at its top when they go back, else at its bottom, and come in at its top).
 */
export function layoutGraph(nodes: LayoutNode[], edges: LayoutEdge[], groups: LayoutGroup[], options: Partial<LayoutOptions> = {}): Layout {
  const opts = { ...DEFAULTS, ...options };
  const pad = opts.groupPadding;
  const groupOf = new Map<string, string>();
  for (const g of groups) for (const m of g.members) groupOf.set(m, g.id);
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const boxId = (g: string) => `\u0001${g}`;

  // Each group on its own: its label, its members, a port for each edge that leaves or enters it.
  const inside = new Map<string, ReturnType<typeof layered> & { label: string; ports: Map<string, 'top' | 'bottom'> }>();
  for (const g of groups) {
    const members = nodes.filter((n) => groupOf.get(n.id) === g.id);
    const labelId = `\u0002${g.id}`;
    const ports = new Map<string, 'top' | 'bottom'>();
    const own: LayoutEdge[] = [];
    for (const e of edges) {
      const a = groupOf.get(e.from) === g.id;
      const b = groupOf.get(e.to) === g.id;
      if (a && b) own.push(e);
      else if (a || b) {
        const outer = a ? e.to : e.from;
        const innerId = a ? e.from : e.to;
        // An edge to a node before the group (its loop) goes out at the top; into the group, in at the top.
        const side = b || (index.get(outer) as number) < (index.get(innerId) as number) ? 'top' : 'bottom';
        const port = `\u0004${e.id}`;
        ports.set(e.id, side);
        own.push(a ? { ...e, from: e.from, to: port } : { ...e, from: port, to: e.to });
      }
    }
    const portNodes = [...ports].map(([id, side]) => ({ id: `\u0004${id}`, width: 0, height: 0, side }));
    const laid = layered(
      [
        { id: labelId, ...g.label },
        ...portNodes.filter((p) => p.side === 'top'),
        ...members,
        ...portNodes.filter((p) => p.side === 'bottom'),
      ].map(({ id, width, height }) => ({ id, width, height })),
      own,
      opts,
      {
        top: new Set([labelId, ...portNodes.filter((p) => p.side === 'top').map((p) => p.id)]),
        below: new Set(members.map((m) => m.id)),
        bottom: new Set(portNodes.filter((p) => p.side === 'bottom').map((p) => p.id)),
      },
    );
    inside.set(g.id, { ...laid, label: labelId, ports });
  }

  // The graph around the groups: each group one box, its edges attached at its ports.
  const outerNodes: LayoutNode[] = [];
  for (const n of nodes) {
    const g = groupOf.get(n.id);
    if (!g) outerNodes.push(n);
    else if (!outerNodes.some((o) => o.id === boxId(g))) {
      const laid = inside.get(g) as ReturnType<typeof layered>;
      outerNodes.push({ id: boxId(g), width: laid.width + 2 * pad, height: laid.height + 2 * pad });
    }
  }
  const attach: Attach = new Map();
  const outerEdges: LayoutEdge[] = [];
  for (const e of edges) {
    const ga = groupOf.get(e.from);
    const gb = groupOf.get(e.to);
    if (ga && ga === gb) continue;
    const from = ga ? boxId(ga) : e.from;
    const to = gb ? boxId(gb) : e.to;
    for (const [end, g] of [
      [from, ga],
      [to, gb],
    ] as const) {
      if (!g) continue;
      const laid = inside.get(g) as NonNullable<ReturnType<typeof inside.get>>;
      const port = laid.nodes.get(`\u0004${e.id}`) as Box;
      attach.set(`${e.id}\u0000${end}`, { dx: port.x + pad - (laid.width + 2 * pad) / 2, side: laid.ports.get(e.id) as 'top' | 'bottom' });
    }
    // The label is drawn inside the group (on its part of the edge) when the edge has one there.
    outerEdges.push({ id: e.id, from, to, ...(e.label && !ga && !gb ? { label: e.label } : {}) });
  }
  const outer = layered(outerNodes, outerEdges, opts, { attach });

  // Everything in the drawing's coordinates, with its margin.
  const m = opts.margin;
  const at = (p: Point, dx = 0, dy = 0) => ({ x: p.x + dx + m, y: p.y + dy + m });
  const result: Layout = {
    width: outer.width + 2 * m,
    height: outer.height + 2 * m,
    nodes: new Map(),
    edges: new Map(),
    groups: new Map(),
  };
  for (const n of nodes) {
    const g = groupOf.get(n.id);
    if (!g) result.nodes.set(n.id, { ...(outer.nodes.get(n.id) as Box), ...at(outer.nodes.get(n.id) as Box) });
  }
  const origin = new Map<string, Point>();
  for (const g of groups) {
    const b = outer.nodes.get(boxId(g.id)) as Box;
    const laid = inside.get(g.id) as NonNullable<ReturnType<typeof inside.get>>;
    const o = { x: b.x - b.width / 2 + pad, y: b.y - b.height / 2 + pad };
    origin.set(g.id, o);
    const label = laid.nodes.get(laid.label) as Box;
    result.groups.set(g.id, { ...b, ...at(b), label: at(label, o.x, o.y) });
    for (const id of g.members) {
      const p = laid.nodes.get(id);
      if (p) result.nodes.set(id, { ...p, ...at(p, o.x, o.y) });
    }
  }
  for (const e of edges) {
    const ga = groupOf.get(e.from);
    const gb = groupOf.get(e.to);
    const o = (g: string) => origin.get(g) as Point;
    const innerRoute = (g: string) => (inside.get(g) as NonNullable<ReturnType<typeof inside.get>>).routes.get(e.id);
    if (ga && ga === gb) {
      const r = innerRoute(ga);
      if (r)
        result.edges.set(e.id, {
          points: r.points.map((p) => at(p, o(ga).x, o(ga).y)),
          ...(r.label ? { label: at(r.label, o(ga).x, o(ga).y) } : {}),
        });
      continue;
    }
    const out = outer.routes.get(e.id);
    if (!out) continue;
    let points = out.points.map((p) => at(p));
    let label = out.label ? at(out.label) : undefined;
    // The part inside a group: before the outer part when the edge leaves it, after it when the edge enters.
    if (ga) {
      const r = innerRoute(ga);
      if (r) {
        points = [...r.points.map((p) => at(p, o(ga).x, o(ga).y)), ...points];
        if (r.label) label = at(r.label, o(ga).x, o(ga).y);
      }
    }
    if (gb) {
      const r = innerRoute(gb);
      if (r) {
        points = [...points, ...r.points.map((p) => at(p, o(gb).x, o(gb).y))];
        if (r.label) label = at(r.label, o(gb).x, o(gb).y);
      }
    }
    result.edges.set(e.id, { points, ...(label ? { label } : {}) });
  }
  return result;
}
