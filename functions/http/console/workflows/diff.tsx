import { diffLines } from 'diff';

// A diff of two definitions: the pretty-printed JSON of each, line by line (the `diff` package). Added
// and removed lines carry a text marker (+, −) and an element (`ins`, `del`) besides their class: the
// change is never told by colour alone.

const pretty = (definition: unknown) => `${JSON.stringify(definition, null, 2)}\n`;

type Line = { kind: 'add' | 'del' | 'same'; text: string };

/** The lines of `to` against `from`, each marked. */
export function definitionDiff(from: unknown, to: unknown): Line[] {
  return diffLines(pretty(from), pretty(to)).flatMap((part) => {
    const kind = part.added ? 'add' : part.removed ? 'del' : 'same';
    return part.value
      .replace(/\n$/, '')
      .split('\n')
      .map((text) => ({ kind, text }) as Line);
  });
}

const MARK = { add: '+', del: '−', same: ' ' } as const;

/** The diff as a `<pre>`: "+" lines in `ins`, "−" lines in `del`, the rest as they are; a count above. */
export function Diff({ from, to, label }: { from: unknown; to: unknown; label: string }) {
  const lines = definitionDiff(from, to);
  const added = lines.filter((l) => l.kind === 'add').length;
  const removed = lines.filter((l) => l.kind === 'del').length;
  return (
    <section aria-label={label}>
      <p>
        {added === 0 && removed === 0
          ? 'The definitions are the same.'
          : `${added} line${added === 1 ? '' : 's'} added (+), ${removed} line${removed === 1 ? '' : 's'} removed (−).`}
      </p>
      <pre class="diff" tabindex={0}>
        {lines.map((l, i) => {
          const text = `${MARK[l.kind]} ${l.text}\n`;
          if (l.kind === 'add')
            return (
              <ins key={String(i)} class="diff-add">
                {text}
              </ins>
            );
          if (l.kind === 'del')
            return (
              <del key={String(i)} class="diff-del">
                {text}
              </del>
            );
          return (
            <span key={String(i)} class="diff-same">
              {text}
            </span>
          );
        })}
      </pre>
    </section>
  );
}
