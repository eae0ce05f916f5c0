import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { escapeHtml } from '../escape-html.ts';
import { type ApprovalCard, type ChannelAdapter, type ChannelKind, fieldLines, outcome, progress, type SendResult, when } from './types.ts';
import { withPlugins } from '../sdk-plugins.ts';

/** The SES v2 client, loaded on first use (only the notify worker and a channel's test send mail). */
let client: Promise<SESv2Client> | undefined;
const ses = () => (client ??= import('@aws-sdk/client-sesv2').then(({ SESv2Client }) => withPlugins(new SESv2Client({}))));

/** The mail of an approval: subject, text and HTML bodies with the reviewer's own links. */
export function render(card: ApprovalCard) {
  const done = outcome(card);
  const subject = done ? `${done}: ${card.title}` : `Approval needed: ${card.title}`;
  const facts: [string, string][] = [
    ['Workflow', card.workflowName ?? card.workflowId],
    ['Run', card.executionId],
    ['Step', card.stepId],
    ...fieldLines(card).map((l) => l.split(/: (.*)/s).slice(0, 2) as [string, string]),
    ...(card.minApprovals > 1 ? [['Quorum', progress(card)] as [string, string]] : []),
    ...(card.expiresAt ? [['Decide before', when(card.expiresAt)] as [string, string]] : []),
  ];
  const links: [string, string | undefined][] = [
    ['Approve', card.links.approve],
    ['Reject', card.links.reject],
    ['Review', card.links.review],
  ];
  const text = [
    card.recipient ? `Hello ${card.recipient},` : '',
    done ?? `An approval waits for you: ${card.title}`,
    card.description ?? '',
    ...facts.map(([k, v]) => `${k}: ${v}`),
    '',
    ...links.filter(([, u]) => u).map(([k, u]) => `${k}: ${u}`),
    '',
    'Each link opens a confirmation page; nothing is decided until you confirm there.',
  ]
    .filter((l, i, all) => l !== '' || all[i - 1] !== '')
    .join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<h2>${escapeHtml(card.title)}</h2>
${done ? `<p><strong>${escapeHtml(done)}</strong></p>` : ''}
${card.description ? `<p>${escapeHtml(card.description)}</p>` : ''}
<table>${facts.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>
<p>${links
    .filter(([, u]) => u)
    .map(([k, u]) => `<a href="${escapeHtml(u as string)}">${k}</a>`)
    .join(' · ')}</p>
<p style="opacity:.7">Each link opens a confirmation page; nothing is decided until you confirm there.</p>
</body></html>`;
  return { subject, text, html };
}

async function sendMail(from: string, to: string, m: { subject: string; text: string; html?: string }): Promise<SendResult> {
  const { SendEmailCommand } = await import('@aws-sdk/client-sesv2');
  try {
    const out = await (await ses()).send(
      new SendEmailCommand({
        FromEmailAddress: from,
        Destination: { ToAddresses: [to] },
        Content: {
          Simple: {
            Subject: { Data: m.subject, Charset: 'UTF-8' },
            Body: { Text: { Data: m.text, Charset: 'UTF-8' }, ...(m.html ? { Html: { Data: m.html, Charset: 'UTF-8' } } : {}) },
          },
        },
      }),
    );
    return { ok: true, status: out.$metadata.httpStatusCode, ref: { messageId: out.MessageId } };
  } catch (e) {
    const err = e as Error & { $metadata?: { httpStatusCode?: number } };
    const status = err.$metadata?.httpStatusCode;
    return {
      ok: false,
      ...(status ? { status } : {}),
      error: `${err.name}: ${err.message}`.slice(0, 500),
      ...(err.name === 'TooManyRequestsException' || err.name === 'ThrottlingException' ? { retryAfterSeconds: 60 } : {}),
    };
  }
}

export const emailKind: ChannelKind<'email'> = {
  type: 'email',
  settings: { from: true },
  secrets: {},
  conversations: false,
  testsCaller: true,
};

export const email: ChannelAdapter<'email'> = {
  kind: emailKind,
  conversation: () => undefined,
  reviewer: async (_ch, u) => ({ ok: true, to: u.email }),
  render,
  send: (ch, to, card) => sendMail(ch.from ?? '', to, render(card)),
  // A sent mail cannot change: its links open a page that says the approval is handled.
  update: async () => ({ ok: true }),
  test: (ch, to) =>
    to
      ? sendMail(ch.from ?? '', to, { subject: 'Flowgate test message', text: `A test message from channel ${ch.name}.` })
      : Promise.resolve({ ok: false, error: 'no address to send to' }),
};
