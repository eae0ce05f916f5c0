// The workflow editor's code editor (CodeMirror 6), bundled into one console asset (`editor.js`, built
// by `npm run assets`) that only the editor page loads. Progressive enhancement: it finds the
// Definition text area, mounts an editor with line numbers in its place and hides it, and copies every
// change back into it (with an `input` event), so the form's POST and htmx's live check work as they do
// without script; without script the text area is the editor. Completion and hover come from the
// definition's JSON Schema (./schema-help.ts); the server's errors become the editor's diagnostics and
// each error's "Line N" moves the caret there. No eval, no inline style: CodeMirror's styles go in
// constructed style sheets (adoptedStyleSheets), which the console's CSP allows.
import { autocompletion, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { bracketMatching, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, setDiagnostics } from '@codemirror/lint';
import { EditorView, highlightActiveLine, highlightActiveLineGutter, hoverTooltip, keymap, lineNumbers } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { StyleModule } from 'style-mod';
import { complete, hoverAt } from './assist.ts';

/** Hover: the schema's line about the property or step type under the pointer. */
const hover = hoverTooltip((view, pos) => {
  const found = hoverAt(view.state, pos);
  if (!found) return null;
  return {
    pos: found.from,
    end: found.to,
    above: true,
    create: () => {
      const dom = document.createElement('div');
      dom.className = 'cm-schema-hover';
      dom.textContent = found.text;
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
  '&:has(.cm-content[aria-invalid="true"])': { borderColor: 'var(--pico-form-element-invalid-border-color)' },
  '&.cm-focused': { outline: '2px solid var(--pico-primary-focus)', outlineOffset: '1px' },
  '.cm-scroller': { minHeight: '24lh', maxHeight: '70vh', fontFamily: 'var(--pico-font-family-monospace)', fontSize: '0.875rem' },
  '.cm-gutters': {
    backgroundColor: 'var(--pico-form-element-background-color)',
    color: 'var(--pico-muted-color)',
    borderRight: '1px solid var(--pico-muted-border-color)',
  },
  '.cm-activeLine': { backgroundColor: 'transparent' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--pico-form-element-background-color)', color: 'var(--pico-color)', fontWeight: 'bold' },
  '.cm-schema-hover': { padding: '0.25rem 0.5rem', maxWidth: '32rem' },
});

/** JSON's colours from the console's own (Pico's), so that they hold their contrast in the light and the dark scheme. */
const HIGHLIGHT = HighlightStyle.define([
  { tag: tags.string, color: 'var(--pico-ins-color)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--pico-primary)' },
  { tag: tags.propertyName, color: 'var(--pico-color)' },
  { tag: tags.invalid, color: 'var(--pico-del-color)' },
]);

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
      syntaxHighlighting(HIGHLIGHT),
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
        // Focusable by itself (as it is anyway, being editable) so that its scrolling region counts as reachable by keyboard.
        tabindex: '0',
      }),
      // Text typed or inserted over a selection goes in through CodeMirror: the browser's own edit would merge
      // the selected lines' elements and, in Chromium, write a style attribute the CSP refuses. The range is the
      // DOM's selection, which CodeMirror's state may not have read yet.
      EditorView.domEventHandlers({
        beforeinput(event, view) {
          const selected = document.getSelection();
          const range = selected?.rangeCount ? selected.getRangeAt(0) : undefined;
          if (event.inputType !== 'insertText' || event.data === null || event.isComposing || !range || range.collapsed) return false;
          if (!view.contentDOM.contains(range.startContainer) || !view.contentDOM.contains(range.endContainer)) return false;
          const from = view.posAtDOM(range.startContainer, range.startOffset);
          const to = view.posAtDOM(range.endContainer, range.endOffset);
          event.preventDefault();
          view.dispatch({
            changes: { from, to, insert: event.data },
            selection: { anchor: from + event.data.length },
            userEvent: 'input.type',
            scrollIntoView: true,
          });
          return true;
        },
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

/**
 * CodeMirror under the console's CSP (`style-src 'self'`: no <style> element, no style attribute).
 * Its styles go in a constructed style sheet (adoptedStyleSheets), which the CSP allows: style-mod
 * adopts one only for a root without a `head`, so its style set is made once through a view of the
 * document without one, and every later mount on the document finds and reuses it. The few style
 * attributes CodeMirror writes (the content's tab-size) are applied through the CSSOM instead, which
 * the CSP allows too; this script runs only on the editor page.
 */
function underCsp() {
  const headless = new Proxy(document, {
    get: (target, key) => (key === 'head' ? undefined : Reflect.get(target, key)),
    set: (target, key, value) => Reflect.set(target, key, value),
  });
  StyleModule.mount(headless, []);
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (this: Element, name: string, value: string) {
    // Any element with an inline style (HTML and SVG alike: CodeMirror's icons and markers are SVG).
    if (name.toLowerCase() === 'style' && (this instanceof HTMLElement || this instanceof SVGElement)) this.style.cssText = value;
    else setAttribute.call(this, name, value);
  };
}

const area = document.getElementById('wf-definition');
if (area instanceof HTMLTextAreaElement && 'adoptedStyleSheets' in document) {
  underCsp();
  mount(area);
}
