import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { slack } from '../../shared/channels/slack.ts';
import type { ApprovalCard } from '../../shared/channels/types.ts';
import { anyUnits } from '../support/properties.ts';
import { blockKitProblems, controlSequences } from '../support/slack-block-kit.ts';

/**
 * The Slack message of an approval (issue 31, findings 1 and 2): every text we did not write reaches
 * Slack escaped (`&`, `<`, `>`: no mention, no link whose label hides its target), and every message
 * keeps Block Kit's published limits (test/support/slack-block-kit.ts), whatever the run put in it.
 */

const HOSTILE_NOTE = '<!channel> <https://evil.example/phish|Open the Flowgate review page>';

const card = (over: Partial<ApprovalCard> = {}): ApprovalCard => ({
  approvalId: 'ap_01jabcdefghjkmnpqrstvwxyz0',
  title: 'Deploy?',
  workflowId: 'wf_01jabcdefghjkmnpqrstvwxyz0',
  workflowName: 'release',
  executionId: 'ex_01jabcdefghjkmnpqrstvwxyz0',
  stepId: 'gate',
  fields: [],
  minApprovals: 1,
  approvals: 0,
  status: 'PENDING',
  links: { review: 'http://flowgate.test/api/webhook-trigger/approval/ap_1/approve' },
  ...over,
});

type Message = { text: string; blocks: { type: string; text?: { text: string }; fields?: { text: string }[]; elements?: any[] }[] };
const render = (c: ApprovalCard) => slack.render(c) as Message;
/** Every text of a message that Slack reads (the fallback and every text object), in order. */
const texts = (m: Message): string[] => [
  m.text,
  ...m.blocks.flatMap((b) => [
    ...(b.text ? [b.text.text] : []),
    ...(b.fields ?? []).map((f) => f.text),
    ...(b.elements ?? []).map((e) => e.text?.text ?? e.text),
  ]),
];
const header = (m: Message) => m.blocks.find((b) => b.type === 'header')?.text?.text ?? '';

describe('the Block Kit check (test/support/slack-block-kit.ts)', () => {
  it('finds what Slack refuses or would show unescaped (a check that finds nothing must be able to fail)', () => {
    const field = (text: string) => ({ type: 'mrkdwn', text });
    const problems = blockKitProblems({
      text: 'x'.repeat(4_000),
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: '' } },
        { type: 'header', text: { type: 'mrkdwn', text: `${'😀'.repeat(75)}\ud83d` } },
        { type: 'section', text: { type: 'mrkdwn', text: '<!channel> & <https://evil.example|label>' } },
        { type: 'section', fields: Array.from({ length: 11 }, () => field('v')) },
        { type: 'section', fields: [field('y'.repeat(2_001))] },
        { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Go' }, style: 'loud' }] },
        { type: 'video' },
      ],
    });
    expect(problems).toEqual([
      'text: 4000 characters, not 1–3999',
      'blocks[0].text.text: 0 characters, not 1–150',
      'blocks[1].text.type: mrkdwn is not allowed here',
      'blocks[1].text.text: 151 characters, not 1–150',
      'blocks[1].text.text: not well-formed Unicode (half a surrogate pair)',
      'blocks[2].text.text: unescaped < at 0',
      'blocks[2].text.text: unescaped > at 9',
      'blocks[2].text.text: unescaped & at 11',
      'blocks[2].text.text: unescaped < at 13',
      'blocks[2].text.text: unescaped > at 40',
      'blocks[3].fields: not a list of 1–10',
      'blocks[4].fields[0].text: 2001 characters, not 1–2000',
      'blocks[5].elements[0].style: loud',
      'blocks[6]: unknown block type video',
    ]);
  });
});

describe('Slack: text we did not write is escaped (finding 1)', () => {
  const hostile = card({
    title: '<!channel> Deploy & ship <@U0123ABCD>?',
    description: `Note: ${HOSTILE_NOTE} & <@U0123ABCD> <#C0123|general> <!subteam^S1|@ops>`,
    workflowName: '<!here> <https://evil.example|release>',
    fields: [
      { name: 'window', label: '<@U0999> Window', value: '<https://evil.example|tonight> & later' },
      { name: 'who', value: '<!everyone>' },
    ],
    minApprovals: 2,
  });

  it('in the header, the description, the context line, the fields and the fallback text', () => {
    const m = render(hostile);
    expect(blockKitProblems(m)).toEqual([]);
    for (const t of texts(m)) expect(controlSequences(t), t).toEqual([]);
    expect(header(m)).toBe('&lt;!channel&gt; Deploy &amp; ship &lt;@U0123ABCD&gt;?');
    expect(m.text).toBe('Approval needed: &lt;!channel&gt; Deploy &amp; ship &lt;@U0123ABCD&gt;?');
    const all = texts(m).join('\n');
    expect(all).toContain(
      'Note: &lt;!channel&gt; &lt;https://evil.example/phish|Open the Flowgate review page&gt; &amp; &lt;@U0123ABCD&gt;',
    );
    expect(all).toContain('Workflow *&lt;!here&gt; &lt;https://evil.example|release&gt;*');
    expect(all).toContain('&lt;@U0999&gt; Window: &lt;https://evil.example|tonight&gt; &amp; later');
    expect(all).toContain('who: &lt;!everyone&gt;');
  });

  it('in the message that replaces it once decided (chat.update, response_url): the outcome and who decided', () => {
    const m = render({ ...hostile, status: 'APPROVED', decidedBy: '<!channel>@example.com', decidedAt: Date.UTC(2026, 0, 2, 3, 4, 5) });
    expect(blockKitProblems(m)).toEqual([]);
    expect(texts(m).join('\n')).toContain('*Approved by &lt;!channel&gt;@example.com at 2026-01-02 03:04:05 UTC*');
    expect(m.text).toBe(
      '&lt;!channel&gt; Deploy &amp; ship &lt;@U0123ABCD&gt;?: Approved by &lt;!channel&gt;@example.com at 2026-01-02 03:04:05 UTC',
    );
  });

  it('our own formatting stays: bold workflow name, code ids, the quorum', () => {
    const m = render(card({ minApprovals: 2, approvals: 1 }));
    expect(texts(m)).toContain(
      'Workflow *release* · run `ex_01jabcdefghjkmnpqrstvwxyz0` · step `gate` · approval `ap_01jabcdefghjkmnpqrstvwxyz0`',
    );
    expect(texts(m)).toContain('Quorum: 1 of 2 approvals');
  });
});

describe("Slack: Block Kit's limits hold for any text (finding 2)", () => {
  it('an empty (or blank) title gets a header of its own', () => {
    for (const title of ['', '   ', '\n']) {
      const m = render(card({ title }));
      expect(blockKitProblems(m), JSON.stringify(title)).toEqual([]);
      expect(header(m).trim().length).toBeGreaterThan(0);
      expect(m.text.trim()).not.toMatch(/:$/);
    }
  });

  it('a long title of emoji is cut at 150 characters on a character boundary, never inside a surrogate pair', () => {
    for (const title of ['😀'.repeat(200), `a${'😀'.repeat(200)}`, '👩‍👩‍👧‍👦'.repeat(40), `${'x'.repeat(148)}&&&`]) {
      const m = render(card({ title }));
      expect(blockKitProblems(m), title.slice(0, 10)).toEqual([]);
      expect(header(m).length).toBeLessThanOrEqual(150);
      expect(header(m).isWellFormed()).toBe(true);
      expect(header(m).endsWith('…')).toBe(true);
    }
    // Escapes count: a cut never leaves half of `&amp;`.
    expect(header(render(card({ title: `${'x'.repeat(146)}&&&` })))).toBe(`${'x'.repeat(146)}…`);
  });

  it('the fallback text stays under 4,000 characters, a section under 3,000, whatever the title and description', () => {
    const m = render(card({ title: '&'.repeat(5_000), description: '<'.repeat(5_000) }));
    expect(blockKitProblems(m)).toEqual([]);
    expect(m.text.length).toBeLessThan(4_000);
  });

  it('a form of 12 fields shows 10 and says that 2 more exist', () => {
    const fields = Array.from({ length: 12 }, (_, i) => ({ name: `f${i + 1}`, value: 'v'.repeat(3_000) }));
    const m = render(card({ fields }));
    expect(blockKitProblems(m)).toEqual([]);
    const shown = m.blocks.find((b) => b.fields)?.fields ?? [];
    expect(shown).toHaveLength(10);
    expect(shown.every((f) => f.text.length <= 2_000)).toBe(true);
    expect(texts(m).join('\n')).toMatch(/2 more fields/);
    // Ten fit without a word.
    expect(texts(render(card({ fields: fields.slice(0, 10) }))).join('\n')).not.toMatch(/more field/);
  });

  it('a default that is an object shows as JSON, whatever its keys (found by the property below: `{"toString": false}` threw)', () => {
    const m = render(
      card({
        fields: [
          { name: 'x', value: { toString: false, a: '<!channel>' } },
          { name: 'n', value: 5 },
        ],
      }),
    );
    expect(blockKitProblems(m)).toEqual([]);
    expect(texts(m)).toContain('x: {"toString":false,"a":"&lt;!channel&gt;"}');
    expect(texts(m)).toContain('n: 5');
  });

  it('lone surrogates from a run reach Slack as well-formed text', () => {
    const m = render(card({ title: 'a\ud800b', description: '\udc00', fields: [{ name: 'x', value: '\ud83d' }] }));
    expect(blockKitProblems(m)).toEqual([]);
  });

  it('any card, pending or decided, gives a message Slack takes (property)', () => {
    const hostile = fc.constantFrom('<!channel>', '<@U0123ABCD>', '<https://evil.example|label>', '&', '&amp;', '>', '😀', '\ud800');
    const str = (max: number) =>
      fc.oneof(
        fc.string({ maxLength: max }),
        fc.string({ unit: 'grapheme', maxLength: max }),
        anyUnits(max),
        hostile,
        fc.array(hostile).map((a) => a.join('')),
      );
    const anyCard = fc.record({
      title: str(6_000),
      description: fc.option(str(6_000), { nil: undefined }),
      workflowName: fc.option(str(300), { nil: undefined }),
      fields: fc.array(
        fc.record({ name: str(60), label: fc.option(str(300), { nil: undefined }), value: fc.oneof(str(3_000), fc.jsonValue()) }),
        { maxLength: 50 },
      ),
      minApprovals: fc.integer({ min: 1, max: 100 }),
      status: fc.constantFrom('PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'CANCELLED'),
      decidedBy: fc.option(str(320), { nil: undefined }),
    });
    fc.assert(
      fc.property(anyCard, (c) => {
        const m = render(card({ ...c, decidedAt: Date.now() } as Partial<ApprovalCard>));
        expect(blockKitProblems(m)).toEqual([]);
      }),
      { numRuns: 1_000 },
    );
  });
});
