// A download's Content-Disposition (RFC 6266) for a name anyone may have chosen (an artifact's, set by
// a workflow's definition): `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<RFC 5987 encoding>`.

/**
 * What never reaches a download name: controls (C0, DEL, C1), the invisible formatting characters
 * (Unicode's Cf: bidi embeddings, overrides such as U+202E, isolates and marks, zero-width
 * characters), and the line and paragraph separators. A right-to-left override would show
 * `report‮fdp.exe` as `reportexe.pdf`.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
/** Outside printable ASCII, and what a quoted-string or a browser reads specially (`"`, `\`, `%`). */
const NOT_PLAIN = /[^\x20-\x7e]|["\\%]/g;

/** The name as shown: unsafe characters dropped, a lone surrogate made U+FFFD; `fallback` when nothing is left. */
export const downloadName = (name: string, fallback = 'download'): string => name.toWellFormed().replace(UNSAFE, '').trim() || fallback;

/** RFC 5987's `value-chars`: UTF-8, percent-encoded but for its attr-chars (encodeURIComponent leaves `'()*!` too). */
const ext = (s: string) => encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * `attachment` with the cleaned name: `filename` an ASCII fallback (every other character `_`) for
 * clients that do not read `filename*`, and `filename*` the whole name in UTF-8. The header is ASCII
 * only, whatever the name (a character above U+00FF made the S3 emulator answer 500).
 */
export function attachment(name: string, fallback = 'download'): string {
  const shown = downloadName(name, fallback);
  return `attachment; filename="${shown.replace(NOT_PLAIN, '_')}"; filename*=UTF-8''${ext(shown)}`;
}
