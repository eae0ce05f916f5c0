import type { WorkflowDefinition } from '../engine/definition.ts';
import { nestedOf } from '../engine/every-step.ts';
import { endsRunType, jumpsType, type NestedStep, type Step } from '../engine/steps/index.ts';

// A workflow's definition as a graph (issue 33), as data: a node per step, an edge per way the run
// can go on from it (the following step, `next`, a `switch`'s cases and default, `onError`, a skipped
// step's way on), a `for_each`'s body as a group, and the run's start and end. Pure; ./graph.tsx draws
// it, and the run page computes the path a run took from its edges.

/** The run's start and end: nodes of their own (a step id never has a `$`). */
export const START = '$start';
export const END = '$end';

type AnyStep = Step | NestedStep;

/**
 * Why a run goes along an edge: after the step (`order`: the following one, `next`: its `next`), a
 * `switch`'s `case` or `default`, the step's failure (`error`: its `onError`), the step skipped (`when`
 * false) where that goes elsewhere than its success, into a loop's body (`each`), back to the loop at
 * the end of an iteration (`repeat`), on past the loop (`done`).
 */
export type EdgeKind = 'start' | 'order' | 'next' | 'case' | 'default' | 'error' | 'skip' | 'each' | 'repeat' | 'done';

export type GraphNode = {
  id: string;
  /** `$start`, `$end`, or a step (its `type`, and `loop`: the `for_each` it is nested in). */
  kind: 'start' | 'end' | 'step';
  type?: string;
  title?: string;
  loop?: string;
};

/** One edge per pair of nodes: every reason a run goes from `from` to `to` (`kinds`), in words (`label`). */
export type GraphEdge = {
  from: string;
  to: string;
  /** `from->to`: what `taken.edges` holds. */
  key: string;
  kinds: EdgeKind[];
  /** What is written on it (none for the plain way on). */
  label?: string;
  /** The label with its conditions in full (a case's `when`), for the edge's `<title>` and the table. */
  detail?: string;
};

/** A `for_each`'s body: its nested steps, drawn inside a rectangle named after the loop. */
export type GraphGroup = { loop: string; steps: string[] };

export type WorkflowGraphModel = { nodes: GraphNode[]; edges: GraphEdge[]; groups: GraphGroup[] };

export const edgeKey = (from: string, to: string) => `${from}->${to}`;

/** The words of a reason (none for the plain ways on: the following step, `next`). */
const LABELS: Record<EdgeKind, string | undefined> = {
  start: undefined,
  order: undefined,
  next: undefined,
  case: 'case',
  default: 'default',
  error: 'on error',
  skip: 'skipped',
  each: 'each item',
  repeat: 'next item',
  done: 'all items done',
};

/** An expression as people read it: `{% $vars.a > 1 %}` → `$vars.a > 1`; literals as JSON. */
const condition = (when: unknown) => {
  if (typeof when !== 'string') return JSON.stringify(when);
  const m = /^\s*\{%([\s\S]*)%\}\s*$/.exec(when);
  return (m ? (m[1] as string) : when).trim();
};

type Part = { kind: EdgeKind; label?: string; detail?: string };

/** The model of a definition's graph: its nodes, edges (one per pair, reasons merged) and loop bodies. Pure. */
export function workflowGraph(definition: Pick<WorkflowDefinition, 'steps'>): WorkflowGraphModel {
  const nodes: GraphNode[] = [{ id: START, kind: 'start' }];
  const groups: GraphGroup[] = [];
  const parts = new Map<string, { from: string; to: string; parts: Part[] }>();
  const add = (from: string, to: string, part: Part) => {
    const key = edgeKey(from, to);
    const entry = parts.get(key) ?? { from, to, parts: [] };
    entry.parts.push(part);
    parts.set(key, entry);
  };

  /** The edges of one list of steps (the definition's, or a loop's body: past its end, back to the loop). */
  const list = (steps: readonly AnyStep[], after: string, afterKind: EdgeKind, loop?: string) => {
    steps.forEach((s, i) => {
      nodes.push({ id: s.id, kind: 'step', type: s.type, ...(s.title !== undefined ? { title: s.title } : {}), ...(loop ? { loop } : {}) });
      const following = steps[i + 1]?.id ?? after;
      // Where the run goes after the step, and after it skipped or failed on ("continue").
      const onward = s.next !== undefined ? s.next : following;
      const onwardPart: Part = { kind: s.next !== undefined ? 'next' : steps[i + 1] ? 'order' : afterKind };
      const body = nestedOf(s);
      if (body.length > 0) {
        groups.push({ loop: s.id, steps: body.map((n) => n.id) });
        add(s.id, (body[0] as NestedStep).id, { kind: 'each' });
        list(body, s.id, 'repeat', s.id);
        add(s.id, onward, { kind: 'done' });
      } else if ('cases' in s) {
        s.cases.forEach((c, j) => {
          const text = `case ${j + 1}`;
          add(s.id, c.next, { kind: 'case', label: text, detail: `${text}: ${condition(c.when)}` });
        });
        if (s.default !== undefined) add(s.id, s.default, { kind: 'default' });
      } else if (!endsRunType(s.type)) {
        add(s.id, onward, onwardPart);
      }
      // A switch and a fail step go elsewhere when they run: skipped (`when` false), they go on.
      if ((jumpsType(s.type) || endsRunType(s.type)) && 'when' in s && s.when !== undefined && s.when !== true)
        add(s.id, onward, { kind: 'skip', detail: `skipped: when ${condition(s.when)} is false` });
      const onError = s.onError;
      if (onError === 'continue') add(s.id, onward, { kind: 'error', detail: 'on error: continue' });
      else if (onError !== undefined && onError !== 'fail')
        add(s.id, onError.next, { kind: 'error', detail: `on error: go to ${onError.next}` });
    });
  };

  const first = definition.steps[0];
  add(START, first ? first.id : END, { kind: 'start' });
  list(definition.steps, END, 'order');
  nodes.push({ id: END, kind: 'end' });

  const known = new Set(nodes.map((n) => n.id));
  const edges: GraphEdge[] = [];
  for (const [key, { from, to, parts: all }] of parts) {
    if (!known.has(to)) continue; // a definition that names no such step (the schema refuses it; a graph never breaks)
    const kinds = [...new Set(all.map((p) => p.kind))];
    const plain = all.some((p) => LABELS[p.kind] === undefined);
    const words = [...new Set(all.flatMap((p) => p.label ?? LABELS[p.kind] ?? []))];
    const label = words.length === 0 ? undefined : `${plain ? 'also ' : ''}${words.join(', ')}`;
    const details = [...new Set(all.flatMap((p) => p.detail ?? p.label ?? LABELS[p.kind] ?? []))];
    const detail = details.length === 0 ? undefined : `${plain ? 'also ' : ''}${details.join('; ')}`;
    edges.push({ from, to, key, kinds, ...(label ? { label } : {}), ...(detail ? { detail } : {}) });
  }
  return { nodes, edges, groups };
}

/** The edges of a definition's graph (the run page marks those its run took: `taken.edges` holds their `key`). */
export const graphEdges = (definition: Pick<WorkflowDefinition, 'steps'>): GraphEdge[] => workflowGraph(definition).edges;
