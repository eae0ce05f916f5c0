import {
  type Box,
  type Item,
  type LayoutEdge,
  type LayoutNode,
  type LayoutOptions,
  layersOf,
  type Pins,
  type Point,
} from './graph-layers.ts';

// The second half of the console graph's layered layout (./graph-layout.ts): x (each node pulled
// toward its neighbours, its layer's order and spacing kept), y (layer by layer), and the routes.

/** Positions inside one layer of the least squares distance to `want`, in order, each `gap[i]` after the one before. */
function placeInOrder(want: number[], gap: number[]): number[] {
  // With q_i = x_i - (gaps before i), the order constraint is q non-decreasing: pool adjacent violators.
  const offsets: number[] = [];
  let sum = 0;
  for (let i = 0; i < want.length; i++) {
    offsets.push(sum);
    sum += gap[i] ?? 0;
  }
  const blocks: { mean: number; count: number }[] = [];
  want.forEach((w, i) => {
    blocks.push({ mean: w - (offsets[i] as number), count: 1 });
    while (blocks.length > 1) {
      const last = blocks[blocks.length - 1] as { mean: number; count: number };
      const prev = blocks[blocks.length - 2] as { mean: number; count: number };
      if (prev.mean <= last.mean) break;
      const count = prev.count + last.count;
      blocks.splice(-2, 2, { mean: (prev.mean * prev.count + last.mean * last.count) / count, count });
    }
  });
  const q = blocks.flatMap((b) => Array.from({ length: b.count }, () => b.mean));
  return q.map((v, i) => v + (offsets[i] as number));
}

/** Where the segment from a box's centre toward `p` leaves the box. */
function boundary(b: Box, p: Point): Point {
  const dx = p.x - b.x;
  const dy = p.y - b.y;
  if ((dx === 0 && dy === 0) || b.width === 0 || b.height === 0) return { x: b.x, y: b.y };
  const w = b.width / 2;
  const h = b.height / 2;
  const s = Math.abs(dy) * w > Math.abs(dx) * h ? h / Math.abs(dy) : w / Math.abs(dx);
  return { x: b.x + dx * s, y: b.y + dy * s };
}

/**
 * A layered layout of plain nodes (no groups): positions from (0, 0), each edge's points from its `from`
 * to its `to` (`attach`: an edge's end at a box's port, by the edge's id and the end's node).
 */
export function layered(nodes: LayoutNode[], edges: LayoutEdge[], opts: LayoutOptions, pins: Pins = {}) {
  const { items, routed, selfLoops, loopRoom, up, down, layers } = layersOf(nodes, edges, pins);
  const rankCount = layers.length;
  // x: packed, then each layer pulled toward its neighbours (above, below, both), order and spacing kept.
  const widthOf = (it: Item) => it.width + 2 * (loopRoom.get(it.id) ?? 0);
  const gaps = (layer: Item[]) =>
    layer.map((it, i) => {
      const next = layer[i + 1];
      if (!next) return 0;
      return (widthOf(it) + widthOf(next)) / 2 + (it.dummy || next.dummy ? opts.edgeSep : opts.nodeSep);
    });
  for (const layer of layers) {
    const at = placeInOrder(
      layer.map(() => 0),
      gaps(layer),
    );
    layer.forEach((it, i) => {
      it.x = at[i] as number;
    });
  }
  const attachX = (n: string, edge: string) => (items.get(n) as Item).x + (pins.attach?.get(`${edge}\u0000${n}`)?.dx ?? 0);
  for (let pass = 0; pass < 12; pass++) {
    const mode = pass % 3; // 0: above, 1: below, 2: both
    const ranks = Array.from({ length: rankCount }, (_, i) => (mode === 1 ? rankCount - 1 - i : i));
    for (const rank of ranks) {
      const layer = layers[rank] as Item[];
      const want = layer.map((it) => {
        const ns = [...(mode !== 1 ? (up.get(it.id) ?? []) : []), ...(mode !== 0 ? (down.get(it.id) ?? []) : [])];
        return ns.length ? ns.reduce((s, { n, edge }) => s + attachX(n, edge), 0) / ns.length : it.x;
      });
      const at = placeInOrder(want, gaps(layer));
      layer.forEach((it, i) => {
        it.x = at[i] as number;
      });
    }
  }

  // y: each layer as tall as its tallest item; half the rank separation between layers (every other one holds labels).
  let y = 0;
  const bands: number[] = [];
  for (const layer of layers) {
    const h = Math.max(0, ...layer.map((it) => it.height));
    for (const it of layer) it.y = y + h / 2;
    bands.push(h);
    y += h + opts.rankSep / 2;
  }

  // Routes: from the upper end through the points to the lower end, turned for edges that go back.
  const box = (id: string): Box => {
    const it = items.get(id) as Item;
    return { x: it.x, y: it.y, width: it.width, height: it.height };
  };
  const endAt = (node: string, edge: string, toward: Point): Point => {
    const a = pins.attach?.get(`${edge}\u0000${node}`);
    const b = box(node);
    if (a) return { x: b.x + a.dx, y: a.side === 'top' ? b.y - b.height / 2 : b.y + b.height / 2 };
    return boundary(b, toward);
  };
  const routes = new Map<string, { points: Point[]; label?: Point }>();
  for (const r of routed) {
    // Through a layer taller than the point (a group's box is in it), straight down beside what is there.
    const inner = r.chain.flatMap((d) => {
      const it = items.get(d) as Item;
      const band = bands[it.rank] ?? 0;
      return band >= opts.tall && band > it.height + 1
        ? [
            { x: it.x, y: it.y - band / 2 },
            { x: it.x, y: it.y + band / 2 },
          ]
        : [{ x: it.x, y: it.y }];
    });
    const vBox = box(r.v);
    const uBox = box(r.u);
    const start = endAt(r.u, r.edge.id, inner[0] ?? { x: vBox.x, y: vBox.y });
    const end = endAt(r.v, r.edge.id, inner.at(-1) ?? { x: uBox.x, y: uBox.y });
    const points = [start, ...inner, end];
    const label = r.labelAt ? { x: (items.get(r.labelAt) as Item).x, y: (items.get(r.labelAt) as Item).y } : undefined;
    routes.set(r.edge.id, { points: r.reversed ? points.reverse() : points, ...(label ? { label } : {}) });
  }
  for (const e of selfLoops) {
    const b = box(e.from);
    const right = b.x + b.width / 2;
    const points = [
      { x: right, y: b.y - 8 },
      { x: right + 18, y: b.y - 12 },
      { x: right + 18, y: b.y + 12 },
      { x: right, y: b.y + 8 },
    ];
    routes.set(e.id, { points, ...(e.label ? { label: { x: right + 22 + e.label.width / 2, y: b.y } } : {}) });
  }

  const placed = [...items.values()].filter((it) => !it.dummy || it.width > 0);
  const left = Math.min(0, ...placed.map((it) => it.x - widthOf(it) / 2), ...[...routes.values()].flatMap((r) => r.points.map((p) => p.x)));
  const shift = (p: Point) => ({ x: p.x - left, y: p.y });
  const positions = new Map<string, Box>();
  for (const n of nodes) positions.set(n.id, { ...box(n.id), x: (items.get(n.id) as Item).x - left });
  for (const [id, r] of routes) routes.set(id, { points: r.points.map(shift), ...(r.label ? { label: shift(r.label) } : {}) });
  const labelWidth = new Map(edges.map((e) => [e.id, e.label?.width ?? 0]));
  const right = Math.max(
    0,
    ...placed.map((it) => it.x - left + widthOf(it) / 2),
    ...[...routes].flatMap(([id, r]) => [...r.points.map((p) => p.x), ...(r.label ? [r.label.x + (labelWidth.get(id) ?? 0) / 2] : [])]),
  );
  return { width: right, height: Math.max(0, y - opts.rankSep / 2), nodes: positions, routes };
}
