/**
 * Slack messages, safe by construction (docs/approvals-and-channels.md "What a message shows").
 *
 * Slack reads `&`, `<` and `>` as control characters in every text it is sent (mentions such as
 * `<!channel>` and `<@U…>`, links `<url|label>` whose label hides their target), so text we did not
 * write must reach it escaped as `&amp;`, `&lt;`, `&gt;` (Slack's formatting rules). A `SlackText`
 * holds text that is: only `slackText\`…\`` and `SlackText.of` make one (the template's literal parts are
 * ours, mrkdwn formatting included; every value in it is escaped unless it is a `SlackText` already).
 * The block builders take `SlackText` only, and the senders take a `SlackMessage`, which only
 * `slackMessage` makes from them: a string of a run cannot reach Slack unescaped, whatever the caller
 * forgets. The builders also keep Block Kit's limits (a header 1–150 characters, a section's text
 * 3,000, fields 10 of 2,000 each, the fallback text under 4,000), cutting where a character ends.
 */

/** Block Kit's published limits, in UTF-16 code units (never fewer than Slack's characters). */
export const SLACK_LIMITS = { header: 150, text: 3_000, fields: 10, field: 2_000, button: 75, fallback: 3_000 } as const;

const escaped = (s: string) => s.toWellFormed().replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const display = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : (JSON.stringify(v) ?? String(v)));
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export class SlackText {
  readonly #text: string;
  private constructor(text: string) {
    this.#text = text;
  }

  /** What Slack is sent. */
  get text(): string {
    return this.#text;
  }

  /** Text we did not write, escaped (a non-string as JSON). */
  static of(value: unknown): SlackText {
    return value instanceof SlackText ? value : new SlackText(escaped(display(value)));
  }

  /** `slackText\`Workflow *${name}*\``: the literal parts as they are, every value escaped. */
  static template(parts: TemplateStringsArray, ...values: unknown[]): SlackText {
    return new SlackText(parts.reduce((out, part, i) => out + part + (i < values.length ? SlackText.of(values[i]).#text : ''), ''));
  }

  /** The texts one after another, `separator` (ours) between them. */
  static join(texts: readonly SlackText[], separator: string): SlackText {
    return new SlackText(texts.map((t) => t.#text).join(separator));
  }

  /** Whether it shows nothing (empty or only white space). */
  get blank(): boolean {
    return this.#text.trim() === '';
  }

  /**
   * At most `max` code units: cut where a character (a grapheme: never inside a surrogate pair, an
   * emoji sequence or an escape) ends, with `…` to say so.
   */
  cut(max: number): SlackText {
    if (this.#text.length <= max) return this;
    let kept = '';
    for (const { segment } of graphemes.segment(this.#text)) {
      if (kept.length + segment.length > max - 1) break;
      kept += segment;
    }
    return new SlackText(`${kept.replace(/&(?:a|am|amp|l|lt|g|gt)?$/, '')}…`);
  }
}

/** `slackText\`Quorum: ${progress}\``: see `SlackText.template`. */
export const slackText = SlackText.template;

/** A Block Kit block, made by the builders below only. */
declare const BLOCK: unique symbol;
export type SlackBlock = Readonly<Record<string, unknown>> & { readonly [BLOCK]: true };
const block = (b: Record<string, unknown>) => b as SlackBlock;
const mrkdwn = (t: SlackText, max: number) => ({ type: 'mrkdwn', text: t.cut(max).text });
const plain = (t: SlackText, max: number) => ({ type: 'plain_text', text: t.cut(max).text });

/** A header: `orElse` when `title` is blank (Slack takes no empty header). */
export const header = (title: SlackText, orElse: SlackText) =>
  block({ type: 'header', text: plain(title.blank ? orElse : title, SLACK_LIMITS.header) });
export const section = (text: SlackText) => block({ type: 'section', text: mrkdwn(text, SLACK_LIMITS.text) });
/** Two columns of fields: the first ten (callers say when there are more). */
export const fields = (texts: readonly SlackText[]) =>
  block({ type: 'section', fields: texts.slice(0, SLACK_LIMITS.fields).map((t) => mrkdwn(t, SLACK_LIMITS.field)) });
export const context = (text: SlackText) => block({ type: 'context', elements: [mrkdwn(text, SLACK_LIMITS.text)] });

type Button = { text: SlackText; action_id: string; style?: 'primary' | 'danger'; value?: string; url?: string };
export const actions = (blockId: string, buttons: readonly Button[]) =>
  block({
    type: 'actions',
    block_id: blockId,
    elements: buttons.map((b) => ({ type: 'button', ...b, text: plain(b.text, SLACK_LIMITS.button) })),
  });

/** A message as the senders take it (chat.postMessage, chat.update, a `response_url`). */
declare const MESSAGE: unique symbol;
export type SlackMessage = { readonly text: string; readonly blocks?: readonly SlackBlock[] } & { readonly [MESSAGE]: true };

/** `text` is the notification's (and a screen reader's) fallback: cut well under Slack's 4,000. */
export const slackMessage = (text: SlackText, blocks?: readonly SlackBlock[]) =>
  ({ text: text.cut(SLACK_LIMITS.fallback).text, ...(blocks ? { blocks } : {}) }) as SlackMessage;
