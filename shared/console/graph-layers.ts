// The first half of the console graph's layered layout (./graph-layout.ts): which layer each node is
// in, the points of edges that cross layers, and the order of each layer. Plain nodes only (a group
// is laid out on its own, then is one node of the graph around it).

export type Size = { width: number; height: number };
export type Point = { x: number; y: number };
export type Box = Point & Size;
export type LayoutNode = { id: string } & Size;
export type LayoutEdge = { id: string; from: string; to: string; label?: Size };

/** `tall`: a layer this tall (a group's box is in it) is passed straight down by the edges through it. */
export type LayoutOptions = { nodeSep: number; edgeSep: number; rankSep: number; margin: number; groupPadding: number; tall: number };

/** Where an edge (by its id and the end's node: `<edge>\0<node>`) attaches to a group's box: its port's x, on the box's top or bottom. */
export type Attach = Map<string, { dx: number; side: 'top' | 'bottom' }>;
/** Nodes kept in the top layer, below it, in the bottom one; edges' ends at a box's ports. */
export type Pins = { top?: ReadonlySet<string>; below?: ReadonlySet<string>; bottom?: ReadonlySet<string>; attach?: Attach };

/** One node of a layer: a node of the graph, or a point of an edge (`dummy`, with its label's size when it holds the label). */
export type Item = { id: string; width: number; height: number; dummy: boolean; rank: number; x: number; y: number; order: number };
/** An edge as laid out: from `u` down to `v` (`reversed`: drawn from `v` to `u`), through its points. */
export type Routed = { edge: LayoutEdge; u: string; v: string; reversed: boolean; chain: string[]; labelAt?: string };
/** One segment of a routed edge, between two adjacent layers. */
type Link = { a: string; b: string; edge: string };
/** An item's neighbour in the layer above or below, by the edge that links them. */
export type Neighbour = { n: string; edge: string };

/** The graph in layers, each in its order: what the coordinates are computed from (./graph-coordinates.ts). */
export type Layers = {
  items: Map<string, Item>;
  routed: Routed[];
  selfLoops: LayoutEdge[];
  /** Room kept on a node's right for its edge to itself. */
  loopRoom: Map<string, number>;
  up: Map<string, Neighbour[]>;
  down: Map<string, Neighbour[]>;
  layers: Item[][];
};

/** Crossings between two adjacent layers' edges (pairs that swap order). */
function crossings(upper: Item[], lower: Item[], links: Link[]) {
  const pos = new Map<string, number>();
  for (const it of [...upper, ...lower]) pos.set(it.id, it.order);
  const inUpper = new Set(upper.map((i) => i.id));
  const pairs = links
    .filter(({ a, b }) => inUpper.has(a) && !inUpper.has(b) && pos.has(b))
    .map(({ a, b }) => [pos.get(a) as number, pos.get(b) as number] as const);
  let n = 0;
  for (let i = 0; i < pairs.length; i++)
    for (let j = i + 1; j < pairs.length; j++) {
      const [a1, b1] = pairs[i] as readonly [number, number];
      const [a2, b2] = pairs[j] as readonly [number, number];
      if ((a1 - a2) * (b1 - b2) < 0) n++;
    }
  return n;
}

/**
 * Steps 1 to 4 (./graph-layout.ts): edges going back turned around, layers by longest path (every
 * edge at least two apart, a layer between for its label), edges' points in the layers they cross,
 * each layer's order by its neighbours' mean position, the one with the fewest crossings kept.
 */
export function layersOf(nodes: LayoutNode[], edges: LayoutEdge[], pins: Pins): Layers {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const items = new Map<string, Item>();
  for (const n of nodes) items.set(n.id, { ...n, dummy: false, rank: 0, x: 0, y: 0, order: 0 });
  const selfLoops = edges.filter((e) => e.from === e.to && items.has(e.from));
  // A node with an edge to itself keeps room for the loop on its right.
  const loopRoom = new Map<string, number>();
  for (const e of selfLoops) loopRoom.set(e.from, Math.max(loopRoom.get(e.from) ?? 0, 24 + (e.label?.width ?? 0)));
  const routed: Routed[] = edges
    .filter((e) => e.from !== e.to && items.has(e.from) && items.has(e.to))
    .map((edge) => {
      const reversed = (index.get(edge.to) as number) < (index.get(edge.from) as number);
      return { edge, u: reversed ? edge.to : edge.from, v: reversed ? edge.from : edge.to, reversed, chain: [] };
    });

  // Layers: the given order is a topological order of the edges as turned (each goes to a later node).
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const r of routed) {
    preds.set(r.v, [...(preds.get(r.v) ?? []), r.u]);
    succs.set(r.u, [...(succs.get(r.u) ?? []), r.v]);
  }
  for (const n of nodes) {
    const it = items.get(n.id) as Item;
    const floor = pins.below?.has(n.id) ? 2 : 0;
    it.rank = pins.top?.has(n.id) ? 0 : Math.max(floor, ...(preds.get(n.id) ?? []).map((p) => (items.get(p) as Item).rank + 2));
  }
  // A node nothing leads to sits just above the first node it leads to (not at the very top).
  for (const n of [...nodes].reverse()) {
    const it = items.get(n.id) as Item;
    const below = (succs.get(n.id) ?? []).map((s) => (items.get(s) as Item).rank);
    if ((preds.get(n.id) ?? []).length === 0 && below.length > 0 && !pins.top?.has(n.id) && index.get(n.id) !== 0)
      it.rank = Math.max(it.rank, Math.min(...below) - 2);
  }
  const deepest = Math.max(0, ...[...items.values()].filter((i) => !pins.bottom?.has(i.id)).map((i) => i.rank));
  for (const id of pins.bottom ?? []) if (items.has(id)) (items.get(id) as Item).rank = deepest + 2;

  // Points of edges over more than one layer; the label's in the layer nearest the edge's middle.
  for (const r of routed) {
    const from = (items.get(r.u) as Item).rank;
    const to = (items.get(r.v) as Item).rank;
    const mid = from + 2 * Math.max(0, Math.floor((to - from) / 4)) + 1;
    for (let rank = from + 1; rank < to; rank++) {
      const id = `\u0000${r.edge.id}\u0000${rank}`;
      const label = r.edge.label && rank === mid ? r.edge.label : undefined;
      items.set(id, { id, width: label?.width ?? 0, height: label?.height ?? 0, dummy: true, rank, x: 0, y: 0, order: 0 });
      r.chain.push(id);
      if (label) r.labelAt = id;
    }
  }
  const links: Link[] = routed.flatMap((r) => {
    const path = [r.u, ...r.chain, r.v];
    return path.slice(1).map((b, i) => ({ a: path[i] as string, b, edge: r.edge.id }));
  });
  /** Each item's neighbours in the layer above (`up`) and below (`down`), by the edge that links them. */
  const up = new Map<string, { n: string; edge: string }[]>();
  const down = new Map<string, { n: string; edge: string }[]>();
  for (const { a, b, edge } of links) {
    down.set(a, [...(down.get(a) ?? []), { n: b, edge }]);
    up.set(b, [...(up.get(b) ?? []), { n: a, edge }]);
  }

  // Order: first as given (an edge's points after its upper node), then sweeps by neighbours' mean position.
  const rankCount = Math.max(0, ...[...items.values()].map((i) => i.rank)) + 1;
  const layers: Item[][] = Array.from({ length: rankCount }, () => []);
  const seq = new Map<string, number>();
  for (const [i, n] of nodes.entries()) seq.set(n.id, i);
  for (const r of routed) for (const d of r.chain) seq.set(d, (seq.get(r.u) as number) + 0.5);
  for (const it of [...items.values()].sort((a, b) => (seq.get(a.id) as number) - (seq.get(b.id) as number)))
    (layers[it.rank] as Item[]).push(it);
  const renumber = (layer: Item[]) => {
    for (const [i, it] of layer.entries()) it.order = i;
  };
  layers.forEach(renumber);
  const total = () => layers.slice(1).reduce((n, layer, i) => n + crossings(layers[i] as Item[], layer, links), 0);
  let best = layers.map((l) => [...l]);
  let fewest = total();
  for (let pass = 0; pass < 8 && fewest > 0; pass++) {
    const downward = pass % 2 === 0;
    const ranks = Array.from({ length: rankCount }, (_, i) => (downward ? i : rankCount - 1 - i)).slice(1);
    for (const rank of ranks) {
      const layer = layers[rank] as Item[];
      const key = (it: Item) => {
        const ns = (downward ? up : down).get(it.id) ?? [];
        return ns.length ? ns.reduce((s, { n }) => s + (items.get(n) as Item).order, 0) / ns.length : it.order;
      };
      const keyed = layer.map((it) => ({ it, k: key(it) }));
      keyed.sort((a, b) => a.k - b.k || a.it.order - b.it.order);
      layers[rank] = keyed.map((k) => k.it);
      renumber(layers[rank] as Item[]);
    }
    const n = total();
    if (n < fewest) {
      fewest = n;
      best = layers.map((l) => [...l]);
    }
  }
  best.forEach((layer, rank) => {
    layers[rank] = layer;
    renumber(layer);
  });

  return { items, routed, selfLoops, loopRoom, up, down, layers };
}
