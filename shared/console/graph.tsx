import { ScrollX } from './components.tsx';
import { type Layout, layoutGraph, type Point } from './graph-layout.ts';
import { END, type GraphEdge, type GraphGroup, type GraphNode, type WorkflowGraphModel, workflowGraph } from './graph-model.ts';
import type { WorkflowDefinition } from '../engine/definition.ts';
import { endsRunType } from '../engine/steps/index.ts';

// A workflow's definition drawn (issue 33): `WorkflowGraph` is an inline SVG of its graph (the model:
// ./graph-model.ts) laid out in layers (./graph-layout.ts), with the path a run took drawn on it;
// `GraphTable` gives the same facts as a table.

export {
  END,
  type EdgeKind,
  edgeKey,
  type GraphEdge,
  type GraphGroup,
  type GraphNode,
  graphEdges,
  START,
  type WorkflowGraphModel,
  workflowGraph,
} from './graph-model.ts';

// Sizes. Text is measured as the monospace font draws it (console.css): 12 px is 7.2 px a character,
// 11 px 6.6; a generous estimate, so a label never overflows its box.
const CHAR = 7.4;
const SMALL_CHAR = 7.4;
const NODE_H = 44;
/** A node with its run's status written on a third line. */
const STATUS_NODE_H = 62;
const TERMINAL = { width: 64, height: 28 };
/** Longer labels are cut on the drawing (in full in the node's `<title>` and in the table). */
const MAX_CHARS = 40;
const MAX_EDGE_CHARS = 28;

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const nodeWidth = (n: GraphNode) =>
  n.kind === 'step' ? Math.max(96, Math.max(cut(n.id, MAX_CHARS).length, (n.type ?? '').length) * CHAR + 24) : TERMINAL.width;
const GROUP_LABEL_H = 16;
const groupLabel = (group: GraphGroup) => cut(`for_each ${group.loop}`, MAX_CHARS);

/** Positions of the model's nodes, edge routes and groups (./graph-layout.ts, top to bottom). */
function place(model: WorkflowGraphModel, nodeH = NODE_H): Layout {
  const nodes = model.nodes.map((n) => ({
    id: n.id,
    ...(n.kind === 'step' ? { width: Math.max(nodeWidth(n), nodeH > NODE_H ? 140 : 0), height: nodeH } : TERMINAL),
  }));
  const edges = model.edges.map((e) => {
    const text = e.label ? cut(e.label, MAX_EDGE_CHARS) : '';
    return { id: e.key, from: e.from, to: e.to, ...(text ? { label: { width: text.length * SMALL_CHAR + 8, height: 16 } } : {}) };
  });
  const groups = model.groups.map((g) => ({
    id: g.loop,
    members: g.steps,
    label: { width: groupLabel(g).length * SMALL_CHAR + 8, height: GROUP_LABEL_H },
  }));
  return layoutGraph(nodes, edges, groups);
}

const f = (n: number) => Math.round(n * 10) / 10;
/** A route without repeated points (where a group's part of an edge meets the rest). */
const distinct = (points: Point[]) =>
  points.filter((p, i) => i === 0 || Math.hypot(p.x - (points[i - 1] as Point).x, p.y - (points[i - 1] as Point).y) > 0.5);

/** A route through the layout's points, its corners rounded (a quadratic curve through each inner point's neighbours' midpoints). */
function routePath(points: Point[]): string {
  const [first, ...rest] = points;
  if (!first) return '';
  if (rest.length <= 1) return `M${f(first.x)},${f(first.y)}${rest.map((p) => ` L${f(p.x)},${f(p.y)}`).join('')}`;
  let d = `M${f(first.x)},${f(first.y)}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i] as Point;
    const q = rest[i + 1] as Point;
    const mid = i === rest.length - 2 ? q : { x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 };
    d += ` Q${f(p.x)},${f(p.y)} ${f(mid.x)},${f(mid.y)}`;
  }
  return d;
}

/** An arrowhead at the route's end, pointing along its last segment. */
function arrowHead(points: Point[]): string {
  const tip = points.at(-1);
  const from = points.at(-2);
  if (!tip || !from) return '';
  const len = Math.hypot(tip.x - from.x, tip.y - from.y) || 1;
  const ux = (tip.x - from.x) / len;
  const uy = (tip.y - from.y) / len;
  const size = 8;
  const bx = tip.x - ux * size;
  const by = tip.y - uy * size;
  return `M${f(tip.x)},${f(tip.y)} L${f(bx - uy * size * 0.5)},${f(by + ux * size * 0.5)} L${f(bx + uy * size * 0.5)},${f(by - ux * size * 0.5)} Z`;
}

/** The path a run took: the nodes (step ids, `$start`, `$end`) and edges (`from->to`) to draw as taken. */
export type TakenPath = { steps: ReadonlySet<string>; edges: ReadonlySet<string> };

/**
 * A run's status of each step, for the run page's graph: each node then shows it by colour and by a
 * mark and word on its third line, is named by it ("fetch: failed") and links to the step's details
 * on the page (`#step-<id>`); a step missing from the map is "not reached".
 */
export type NodeStatuses = ReadonlyMap<string, string>;

const MARKS: Record<string, string> = {
  SUCCEEDED: '✓ succeeded',
  FAILED: '✗ failed',
  TIMED_OUT: '✗ timed out',
  RUNNING: '▶ running',
  WAITING: '‖ waiting',
  SKIPPED: '↷ skipped',
  CANCELLED: '■ cancelled',
  INTERRUPTED: '‖ interrupted',
};
/** A step's status in words, with its mark: "✗ failed", "○ not reached". */
export const statusMark = (status: string | undefined) =>
  (status && MARKS[status]) ?? (status && status !== 'PENDING' ? status.toLowerCase() : '○ not reached');
const statusClass = (status: string | undefined) => (status && status !== 'PENDING' ? status : 'NOT_REACHED');

const nodeName = (n: GraphNode) => (n.kind === 'start' ? 'Start' : n.kind === 'end' ? 'End' : n.id);

/**
 * The definition as an inline SVG (`role="img"`): a node per step (its id and type written on it, a
 * `<title>` each), the run's start and end, an edge per way on (labelled where it is a case, a
 * default, an error, a skip or a loop's), each `for_each` body in a rectangle named after the loop;
 * `taken` draws a run's path (class `taken`). No `style` attribute: the classes are console.css's.
 */
export function WorkflowGraph({
  definition,
  taken,
  label,
  statuses,
}: {
  definition: Pick<WorkflowDefinition, 'steps'>;
  taken?: TakenPath;
  label?: string;
  statuses?: NodeStatuses;
}) {
  const model = workflowGraph(definition);
  const at = place(model, statuses ? STATUS_NODE_H : NODE_H);
  const width = Math.ceil(at.width);
  const height = Math.ceil(at.height);
  const steps = model.nodes.filter((n) => n.kind === 'step').length;
  const name = label ?? `Workflow graph: ${steps} step${steps === 1 ? '' : 's'}, from start to end`;
  return (
    <ScrollX label={name}>
      <svg
        class={statuses ? 'graph with-status' : 'graph'}
        // With links on its nodes the drawing is a figure (an image's children are not announced; Pico
        // stretches a `group` to the full width, which would shrink the drawing's text on a phone).
        role={statuses ? 'figure' : 'img'}
        aria-label={name}
        xmlns="http://www.w3.org/2000/svg"
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
      >
        <title>{name}</title>
        {model.groups.map((group) => {
          const b = at.groups.get(group.loop);
          if (!b) return null;
          return (
            <g class="group" key={`group-${group.loop}`}>
              <title>{`for_each ${group.loop}: its steps run once per item`}</title>
              <rect x={f(b.x - b.width / 2)} y={f(b.y - b.height / 2)} width={f(b.width)} height={f(b.height)} rx={8} />
              <text x={f(b.label.x)} y={f(b.label.y + 4)} text-anchor="middle" class="group-label">
                {groupLabel(group)}
              </text>
            </g>
          );
        })}
        {model.edges.map((e) => {
          const route = at.edges.get(e.key);
          if (!route) return null;
          const on = taken?.edges.has(e.key) ? ' taken' : '';
          return (
            <g class={`edge-route${on}`} key={`edge-${e.key}`} data-edge={e.key}>
              <title>{`${nodeName(model.nodes.find((n) => n.id === e.from) as GraphNode)} → ${e.to === END ? 'End' : e.to}${e.detail ? `: ${e.detail}` : ''}`}</title>
              <path class={`edge${on}`} d={routePath(distinct(route.points))} />
              <path class={`arrow${on}`} d={arrowHead(distinct(route.points))} />
            </g>
          );
        })}
        {model.edges.map((e) => {
          const l = at.edges.get(e.key)?.label;
          if (!l || !e.label) return null;
          const text = cut(e.label, MAX_EDGE_CHARS);
          const width = text.length * SMALL_CHAR + 8;
          return (
            <g class={`edge-label${taken?.edges.has(e.key) ? ' taken' : ''}`} key={`label-${e.key}`}>
              <rect x={f(l.x - width / 2)} y={f(l.y - 8)} width={f(width)} height={16} rx={3} />
              <text x={f(l.x)} y={f(l.y + 4)} text-anchor="middle">
                {text}
              </text>
            </g>
          );
        })}
        {model.nodes.map((n) => {
          const b = at.nodes.get(n.id);
          if (!b) return null;
          const on = taken?.steps.has(n.id) ? ' taken' : '';
          const x = b.x - b.width / 2;
          const y = b.y - b.height / 2;
          if (n.kind !== 'step')
            return (
              <g class={`node terminal${on}`} key={`node-${n.id}`} data-step={n.id}>
                <title>{n.kind === 'start' ? 'Start of a run' : 'End of a run'}</title>
                <rect x={f(x)} y={f(y)} width={f(b.width)} height={f(b.height)} rx={14} />
                <text x={f(b.x)} y={f(b.y + 4)} text-anchor="middle">
                  {nodeName(n)}
                </text>
              </g>
            );
          const title = `${n.id} (${n.type ?? 'step'})${n.title !== undefined ? `: ${n.title}` : ''}${n.loop ? `, in for_each ${n.loop}` : ''}`;
          const body = (
            <>
              <rect x={f(x)} y={f(y)} width={f(b.width)} height={f(b.height)} rx={6} />
              <text x={f(b.x)} y={f(y + 18)} text-anchor="middle" class="step-id">
                {cut(n.id, MAX_CHARS)}
              </text>
              <text x={f(b.x)} y={f(y + 34)} text-anchor="middle" class="step-type">
                {n.type ?? ''}
              </text>
            </>
          );
          if (!statuses)
            return (
              <g class={`node type-${n.type ?? 'step'}${on}`} key={`node-${n.id}`} data-step={n.id}>
                <title>{title}</title>
                {body}
              </g>
            );
          const status = statuses.get(n.id);
          const mark = statusMark(status);
          return (
            // Named by its <title> (the step and its status in words, "fetch: failed"), not an aria-label the visible text would have to match.
            <a href={`#step-${n.id}`} key={`node-${n.id}`}>
              <title>{`${n.id}: ${mark.replace(/^\W+\s/, '')} (${title})`}</title>
              <g
                class={`node type-${n.type ?? 'step'}${on} node-${statusClass(status)}`}
                data-step={n.id}
                data-status={statusClass(status)}
              >
                {body}
                <text x={f(b.x)} y={f(y + 53)} text-anchor="middle" class="step-status">
                  {mark}
                </text>
              </g>
            </a>
          );
        })}
      </svg>
    </ScrollX>
  );
}

/** Where the run goes from a node, in words, for the table: `deploy`, `End (on error)`. */
const wayOn = (e: GraphEdge) => `${e.to === END ? 'End' : e.to}${e.detail ? ` (${e.detail})` : ''}`;

/** The graph's facts as a table (the drawing's text alternative): each step, its type, its loop, where a run goes from it. */
export function GraphTable({ definition, caption }: { definition: Pick<WorkflowDefinition, 'steps'>; caption?: string }) {
  const model = workflowGraph(definition);
  const from = (id: string) => model.edges.filter((e) => e.from === id);
  return (
    <div class="table-wrap">
      <table>
        <caption>{caption ?? 'Steps and where a run goes from each'}</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Type</th>
            <th scope="col">In loop</th>
            <th scope="col">Goes to</th>
          </tr>
        </thead>
        <tbody>
          {model.nodes.map((n) =>
            n.kind === 'end' ? null : (
              <tr key={n.id}>
                <th scope="row">{nodeName(n)}</th>
                <td>{n.kind === 'start' ? '' : n.type}</td>
                <td>{n.loop ?? ''}</td>
                <td>
                  {from(n.id).length === 0 ? (
                    <span class="muted">{endsRunType(n.type) ? 'the run fails' : '—'}</span>
                  ) : (
                    from(n.id).map(wayOn).join(' · ')
                  )}
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}
