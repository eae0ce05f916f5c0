// The workflow editor's code editor (CodeMirror 6), bundled into one console asset (`editor.js`, built
// by `npm run assets`) that only the editor page loads. Progressive enhancement: it finds the
// Definition text area, mounts an editor with line numbers in its place and hides it, and copies every
// change back into it (with an `input` event), so the form's POST and htmx's live check work as they do
// without script; without script the text area is the editor. Completion and hover come from the
// definition's JSON Schema (./schema-help.ts); the server's errors become the editor's diagnostics and
// each error's "Line N" moves the caret there. No eval, no inline style: CodeMirror's styles go in
// constructed style sheets (adoptedStyleSheets), which the console's CSP allows.
import { autocompletion, type Completion, type CompletionContext, type CompletionResult, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting, syntaxTree } from '@codemirror/language';
import { type Diagnostic, setDiagnostics } from '@codemirror/lint';
import type { EditorState } from '@codemirror/state';
import { EditorView, highlightActiveLine, highlightActiveLineGutter, hoverTooltip, keymap, lineNumbers } from '@codemirror/view';
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
function complete(ctx: CompletionContext): CompletionResult | null {
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

/** Hover: a property's line from the schema; a step type's schema title and what it needs. */
const hover = hoverTooltip((view, pos) => {
  const { state } = view;
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
  if (!text) return null;
  const shown = text;
  return {
    pos: node.from,
    end: node.to,
    above: true,
    create: () => {
      const dom = document.createElement('div');
      dom.className = 'cm-schema-hover';
      dom.textContent = shown;
      return { dom };
    },
  };
});

/** The server's listed errors (their "Line N" links) as the editor's diagnostics. */
function diagnosticsOf(view: EditorView): Diagnostic[] {
  const doc = view.state.doc;
  return Array.from(document.querySelectorAll<HTMLAnchorElement>('#draft-errors a.line-link')).flatMap((a) => {
    const n = Number(a.dataset.line);
    if (!Number.isInteger(n) || n < 1 || n > doc.lines) return [];
    const line = doc.line(n);
    const from = Math.min(line.from + Math.max(0, Number(a.dataset.column ?? 1) - 1), line.to);
    const message = (a.closest('li')?.textContent ?? '').replace(/^Line \d+(, column \d+)? — /, '');
    return [{ from, to: Math.max(from, line.to), severity: 'error' as const, message }];
  });
}

/** Sized like the text area it replaces (24 lines), in the console's colours and font. */
const THEME = EditorView.theme({
  '&': {
    border: '1px solid var(--pico-form-element-border-color)',
    borderRadius: 'var(--pico-border-radius)',
    backgroundColor: 'var(--pico-form-element-background-color)',
    color: 'var(--pico-color)',
    marginBottom: 'var(--pico-spacing)',
  },
  '&.cm-focused': { outline: '2px solid var(--pico-primary-focus)', outlineOffset: '1px' },
  '.cm-scroller': { minHeight: '24lh', maxHeight: '70vh', fontFamily: 'var(--pico-font-family-monospace)', fontSize: '0.875rem' },
  '.cm-gutters': { backgroundColor: 'var(--pico-muted-border-color)', color: 'var(--pico-muted-color)', border: 'none' },
  '.cm-schema-hover': { padding: '0.25rem 0.5rem', maxWidth: '32rem' },
});

function mount(area: HTMLTextAreaElement) {
  const label = document.querySelector<HTMLLabelElement>(`label[for="${area.id}"]`);
  if (label && !label.id) label.id = `${area.id}-label`;
  const view = new EditorView({
    doc: area.value,
    extensions: [
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightActiveLine(),
      history(),
      bracketMatching(),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      json(),
      autocompletion({ override: [complete], activateOnTyping: true }),
      hover,
      // Tab is left to the browser (focus moves on): CodeMirror binds it only when asked.
      keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap]),
      THEME,
      EditorView.contentAttributes.of({
        ...(label ? { 'aria-labelledby': label.id } : { 'aria-label': 'Definition' }),
        'aria-describedby': area.getAttribute('aria-describedby') ?? '',
        spellcheck: 'false',
      }),
      EditorView.updateListener.of((u) => {
        if (!u.docChanged) return;
        area.value = u.state.doc.toString();
        area.dispatchEvent(new Event('input', { bubbles: true }));
      }),
    ],
  });
  view.dom.classList.add('code-editor-mounted');
  area.after(view.dom);
  area.hidden = true;
  // The label now names the editor (aria-labelledby) and focuses it; the hidden text area only carries the value.
  if (label) {
    label.htmlFor = '';
    label.addEventListener('click', () => view.focus());
  }

  const showErrors = () => {
    const invalid = area.getAttribute('aria-invalid');
    if (invalid) view.contentDOM.setAttribute('aria-invalid', invalid);
    else view.contentDOM.removeAttribute('aria-invalid');
    view.dispatch(setDiagnostics(view.state, diagnosticsOf(view)));
  };
  showErrors();
  document.addEventListener('htmx:afterSwap', showErrors);

  // "Line N": the caret to that line and column, the editor focused.
  document.addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest<HTMLAnchorElement>('a.line-link') : null;
    if (!link) return;
    const n = Number(link.dataset.line);
    if (!Number.isInteger(n) || n < 1) return;
    event.preventDefault();
    const line = view.state.doc.line(Math.min(n, view.state.doc.lines));
    const at = Math.min(line.from + Math.max(0, Number(link.dataset.column ?? 1) - 1), line.to);
    view.dispatch({ selection: { anchor: at }, effects: EditorView.scrollIntoView(at, { y: 'center' }) });
    view.focus();
  });
}

const area = document.getElementById('wf-definition');
if (area instanceof HTMLTextAreaElement) mount(area);
