/**
 * A check of a Slack message against Block Kit's published limits (docs.slack.dev, "Reference: Block
 * Kit": blocks, block elements, composition objects) and Slack's formatting rules ("Formatting text
 * for app surfaces": `&`, `<`, `>` are control characters). Slack refuses a message that breaks a
 * limit (`invalid_blocks`) or shows what it was not meant to; the tests run every payload the Slack
 * adapter builds through `blockKitProblems` and expect none.
 *
 * The limits, as Slack publishes them:
 * - a message: `text` (the notification fallback) is best kept under 4,000 characters; at most 50 blocks;
 * - a text object: `type` `plain_text` or `mrkdwn`, `text` 1–3,000 characters;
 * - `header`: `plain_text` of 1–150 characters;
 * - `section`: `text` (≤ 3,000) or `fields` (1–10 text objects of ≤ 2,000 each), at least one of them;
 * - `context`: 1–10 elements;
 * - `actions`: 1–25 elements; a button's `text` is `plain_text` of ≤ 75 characters, `action_id` ≤ 255,
 *   `value` ≤ 2,000, `url` ≤ 3,000, `style` `primary` or `danger`;
 * - any `block_id` ≤ 255.
 * Lengths are counted in UTF-16 code units (never fewer than Slack's characters), and every string
 * must be well-formed Unicode (no half of a surrogate pair).
 */

const MESSAGE_TEXT_MAX = 3_999;
const BLOCKS_MAX = 50;
const TEXT_MAX = 3_000;
const HEADER_MAX = 150;
const FIELDS_MAX = 10;
const FIELD_MAX = 2_000;
const CONTEXT_ELEMENTS_MAX = 10;
const ACTIONS_ELEMENTS_MAX = 25;
const BUTTON_TEXT_MAX = 75;
const ID_MAX = 255;
const VALUE_MAX = 2_000;
const URL_MAX = 3_000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Slack control sequences in a text: a `<` or `>` (a mention, `<!channel>`, a link `<url|label>`),
 * or an `&` that does not start one of the three escapes. Our own messages carry none (their links are
 * buttons), so any is text we did not write that reached Slack unescaped.
 */
export function controlSequences(text: string): string[] {
  return [...text.matchAll(/[<>]|&(?!amp;|lt;|gt;)/g)].map((m) => `${m[0]} at ${m.index}`);
}

/** Every limit `message` breaks, as "where: what" lines; empty when Slack would take it. */
export function blockKitProblems(message: unknown): string[] {
  const problems: string[] = [];
  const fail = (where: string, what: string): void => {
    problems.push(`${where}: ${what}`);
  };
  const string = (where: string, v: unknown, min: number, max: number, escaped = true) => {
    if (typeof v !== 'string') return fail(where, `not a string (${typeof v})`);
    if (v.length < min || v.length > max) fail(where, `${v.length} characters, not ${min}–${max}`);
    if (!v.isWellFormed()) fail(where, 'not well-formed Unicode (half a surrogate pair)');
    if (escaped) for (const c of controlSequences(v)) fail(where, `unescaped ${c}`);
  };
  const textObject = (where: string, v: unknown, max: number, plainOnly = false) => {
    if (!isObject(v)) return fail(where, 'not a text object');
    if (v.type !== 'plain_text' && (plainOnly || v.type !== 'mrkdwn')) fail(`${where}.type`, `${String(v.type)} is not allowed here`);
    string(`${where}.text`, v.text, 1, max);
  };
  const blockId = (where: string, b: Json) => {
    if (b.block_id !== undefined) string(`${where}.block_id`, b.block_id, 1, ID_MAX, false);
  };
  const list = (where: string, v: unknown, max: number): unknown[] => {
    if (Array.isArray(v) && v.length >= 1 && v.length <= max) return v;
    fail(where, `not a list of 1–${max}`);
    return [];
  };
  const check = (at: string, b: unknown) => {
    if (!isObject(b)) return fail(at, 'not an object');
    blockId(at, b);
    if (b.type === 'header') textObject(`${at}.text`, b.text, HEADER_MAX, true);
    else if (b.type === 'section') {
      if (b.text === undefined && b.fields === undefined) fail(at, 'neither text nor fields');
      if (b.text !== undefined) textObject(`${at}.text`, b.text, TEXT_MAX);
      if (b.fields !== undefined)
        for (const [j, f] of list(`${at}.fields`, b.fields, FIELDS_MAX).entries()) textObject(`${at}.fields[${j}]`, f, FIELD_MAX);
    } else if (b.type === 'context') {
      for (const [j, e] of list(`${at}.elements`, b.elements, CONTEXT_ELEMENTS_MAX).entries())
        textObject(`${at}.elements[${j}]`, e, TEXT_MAX);
    } else if (b.type === 'actions') {
      for (const [j, e] of list(`${at}.elements`, b.elements, ACTIONS_ELEMENTS_MAX).entries()) {
        const where = `${at}.elements[${j}]`;
        if (!isObject(e) || e.type !== 'button') {
          fail(where, 'not a button');
          continue;
        }
        textObject(`${where}.text`, e.text, BUTTON_TEXT_MAX, true);
        if (e.action_id !== undefined) string(`${where}.action_id`, e.action_id, 1, ID_MAX, false);
        if (e.value !== undefined) string(`${where}.value`, e.value, 1, VALUE_MAX, false);
        if (e.url !== undefined) string(`${where}.url`, e.url, 1, URL_MAX, false);
        if (e.style !== undefined && e.style !== 'primary' && e.style !== 'danger') fail(`${where}.style`, String(e.style));
      }
    } else if (b.type !== 'divider') fail(at, `unknown block type ${String(b.type)}`);
  };
  if (!isObject(message)) return ['message: not an object'];
  string('text', message.text, 1, MESSAGE_TEXT_MAX);
  if (message.blocks !== undefined) for (const [i, b] of list('blocks', message.blocks, BLOCKS_MAX).entries()) check(`blocks[${i}]`, b);
  return problems;
}
