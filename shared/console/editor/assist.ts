// The editor's help read from the draft's syntax tree (CodeMirror's JSON parser) and the definition's
// JSON Schema: completion of an object's properties and of a property's values (the step types), and
// the hover's text. No DOM: test/unit runs these on an EditorState.
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { syntaxTree } from '@codemirror/language';
import type { EditorState } from '@codemirror/state';
import workflowSchema from '../../../schemas/workflow.schema.json' with { type: 'json' };
import { describeProperty, kindOf, propertiesAt, type SchemaDocument, type Segment, schemaAt, valuesAt } from './schema-help.ts';

const SCHEMA = workflowSchema as unknown as SchemaDocument;
type SyntaxNode = ReturnType<typeof syntaxTree>['topNode'];

const textOf = (state: EditorState, n: SyntaxNode) => state.sliceDoc(n.from, n.to);
const unquote = (s: string) => (s.startsWith('"') ? s.slice(1, s.endsWith('"') && s.length > 1 ? -1 : undefined) : s);

/** The `type` written in an object node (a step's), if any. */
function tagOf(state: EditorState, object: SyntaxNode): string | undefined {
  for (let p = object.firstChild; p; p = p.nextSibling) {
    if (p.name !== 'Property') continue;
    const key = p.getChild('PropertyName');
    const value = key?.nextSibling?.name === ':' ? key.nextSibling.nextSibling : key?.nextSibling;
    if (key && unquote(textOf(state, key)) === 'type' && value?.name === 'String') return unquote(textOf(state, value));
  }
  return undefined;
}

/** The way from the definition to the object or list that holds `node` (its own property left out). */
function pathTo(state: EditorState, node: SyntaxNode | null): { path: Segment[]; object?: SyntaxNode } {
  const chain: SyntaxNode[] = [];
  for (let n = node; n; n = n.parent) chain.unshift(n);
  const path: Segment[] = [];
  let object: SyntaxNode | undefined;
  for (const n of chain) {
    if (n.name === 'Object') object = n;
    else if (n.name === 'Array') path.push({ item: true });
    else if (n.name === 'Property' && n !== node) {
      const key = n.getChild('PropertyName');
      if (key && key !== node && !(node && key.from <= node.from && node.to <= key.to))
        path.push({ key: unquote(textOf(state, key)), tag: object ? tagOf(state, object) : undefined });
    }
  }
  return object ? { path, object } : { path };
}

/** The innermost object at `pos` and the way to it. */
function objectAt(state: EditorState, pos: number) {
  let n: SyntaxNode | null = syntaxTree(state).resolveInner(pos, -1);
  while (n && n.name !== 'Object') n = n.parent;
  return n ? { ...pathTo(state, n), object: n } : undefined;
}

/** Completion: a property's values after `"key": "` (the step types, enums), an object's properties after `"`. */
export function complete(ctx: CompletionContext): CompletionResult | null {
  const { state, pos } = ctx;
  const line = state.doc.lineAt(pos);
  const before = state.sliceDoc(line.from, pos);
  const closed = state.sliceDoc(pos, pos + 1) === '"';
  const value = /"([^"\\]+)"\s*:\s*"([^"\\]*)$/.exec(before);
  if (value) {
    const keyPos = line.from + value.index + 1;
    const at = objectAt(state, keyPos);
    if (!at) return null;
    const key = value[1] as string;
    const values = valuesAt(SCHEMA, [...at.path, { key, tag: tagOf(state, at.object) }]);
    if (!values.length) return null;
    return {
      from: pos - (value[2] as string).length,
      options: values.map((v): Completion => ({ label: v, type: 'enum', apply: closed ? v : `${v}"` })),
      validFor: /^[\w.-]*$/,
    };
  }
  const key = /(?:^|[{,])\s*"([\w$]*)$/.exec(before);
  const bare = ctx.explicit && /(?:^|[{,])\s*$/.test(before);
  if (!key && !bare) return null;
  const typed = key ? (key[1] as string) : '';
  const at = objectAt(state, pos - typed.length - (key ? 1 : 0));
  if (!at) return null;
  const tag = tagOf(state, at.object);
  const present = new Set<string>();
  for (let p = at.object.firstChild; p; p = p.nextSibling) {
    const k = p.name === 'Property' ? p.getChild('PropertyName') : null;
    if (k && !(k.from <= pos && pos <= k.to)) present.add(unquote(textOf(state, k)));
  }
  const props = propertiesAt(SCHEMA, at.path, tag).filter((p) => !present.has(p.name));
  if (!props.length) return null;
  return {
    from: pos - typed.length,
    options: props.map(
      (p): Completion => ({
        label: p.name,
        type: 'property',
        detail: p.required ? 'required' : 'optional',
        info: kindOf(SCHEMA, p.schema),
        boost: p.required ? 1 : 0,
        apply: key ? (closed ? p.name : `${p.name}": `) : `"${p.name}": `,
      }),
    ),
    validFor: /^[\w$]*$/,
  };
}

/** The hover's text at `pos`: a property's line from the schema; a step type's required properties. */
export function hoverAt(state: EditorState, pos: number): { from: number; to: number; text: string } | null {
  const node = syntaxTree(state).resolveInner(pos, 1);
  let text: string | undefined;
  if (node.name === 'PropertyName') {
    const at = objectAt(state, node.from);
    if (at) text = describeProperty(SCHEMA, at.path, unquote(textOf(state, node)), tagOf(state, at.object));
  } else if (node.name === 'String' && node.parent?.name === 'Property') {
    const key = node.parent.getChild('PropertyName');
    const at = objectAt(state, node.from);
    if (key && at && unquote(textOf(state, key)) === 'type') {
      const type = unquote(textOf(state, node));
      const required = propertiesAt(SCHEMA, at.path, type).filter((p) => p.required);
      const step = schemaAt(SCHEMA, [...at.path, { key: 'type', tag: type }]);
      if (step?.const === type && required.length) text = `${type}: needs ${required.map((p) => p.name).join(', ')}`;
    }
  }
  return text ? { from: node.from, to: node.to, text } : null;
}
