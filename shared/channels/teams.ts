import { config } from '../config.ts';
import {
  type ApprovalCard,
  type ChannelAdapter,
  type ChannelKind,
  fieldLines,
  MASK,
  type OpenChannel,
  outcome,
  progress,
  type SendResult,
  when,
} from './types.ts';

const TIMEOUT_MS = 10_000;

/**
 * The Adaptive Card of an approval, as a Teams Workflows webhook takes it (a message with one card
 * attachment). Its buttons open the confirmation page (`Action.OpenUrl`): `Action.Submit` does not
 * reach us through these webhooks.
 */
export function render(card: ApprovalCard) {
  const done = outcome(card);
  const facts = [
    { title: 'Workflow', value: card.workflowName ?? card.workflowId },
    { title: 'Run', value: card.executionId },
    { title: 'Step', value: card.stepId },
    ...fieldLines(card).map((l) => {
      const [title, value] = l.split(/: (.*)/s);
      return { title: title ?? '', value: value ?? '' };
    }),
    ...(card.minApprovals > 1 ? [{ title: 'Quorum', value: progress(card) }] : []),
    ...(card.expiresAt && !done ? [{ title: 'Decide before', value: when(card.expiresAt) }] : []),
  ];
  const actions = done
    ? []
    : [
        ...(card.links.approve ? [{ type: 'Action.OpenUrl', title: 'Approve', url: card.links.approve }] : []),
        ...(card.links.reject ? [{ type: 'Action.OpenUrl', title: 'Reject', url: card.links.reject }] : []),
        { type: 'Action.OpenUrl', title: 'Review', url: card.links.review },
      ];
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: card.title, size: 'Large', weight: 'Bolder', wrap: true },
            ...(done ? [{ type: 'TextBlock', text: done, weight: 'Bolder', wrap: true }] : []),
            ...(card.description ? [{ type: 'TextBlock', text: card.description, wrap: true }] : []),
            { type: 'FactSet', facts },
          ],
          actions,
        },
      },
    ],
  };
}

/** POST to the webhook under the http_request egress rules (no redirects: a redirected POST loses its body). */
async function post(ch: OpenChannel, body: unknown): Promise<SendResult> {
  try {
    // Loaded on first send: code that only reads `teamsKind` (the channel routes, the sweeps) bundles no egress.
    const { performHttpRequest } = await import('../egress/http.ts');
    const res = await performHttpRequest(
      {
        method: 'POST',
        url: ch.webhookUrl ?? '',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: TIMEOUT_MS,
      },
      { allowlist: config().HTTP_STEP_ALLOWLIST, maxResponseBytes: 64 * 1024, maxRedirects: 0 },
    );
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    const retry = Number(res.headers['retry-after']);
    return {
      ok: false,
      status: res.status,
      error: typeof res.body === 'string' ? res.body.slice(0, 300) : JSON.stringify(res.body ?? null).slice(0, 300),
      ...(res.status === 429 ? { retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : 30 } : {}),
    };
  } catch (e) {
    return { ok: false, error: `${(e as { code?: string }).code ?? (e as Error).name}: ${(e as Error).message}`.slice(0, 300) };
  }
}

export const teamsKind: ChannelKind<'teams'> = {
  type: 'teams',
  settings: { webhookUrl: true },
  // Scheme and host only: a webhook URL's path is its secret.
  secrets: { webhookUrl: (v) => `${new URL(v).origin}/${MASK}` },
  conversations: false,
};

export const teams: ChannelAdapter<'teams'> = {
  kind: teamsKind,
  // The webhook posts to the one chat its flow names.
  conversation: () => ({ key: 'teams', to: 'webhook' }),
  reviewer: async () => ({ ok: false, error: 'a Teams webhook has no address per reviewer' }),
  render,
  send: (ch, _to, card) => post(ch, render(card)),
  // A Workflows webhook cannot edit a posted card: the outcome follows as a card of its own, without buttons.
  update: (ch, _ref, card) => (card.status === 'PENDING' ? Promise.resolve({ ok: true }) : post(ch, render(card))),
  test: (ch) =>
    post(ch, {
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          contentUrl: null,
          content: {
            type: 'AdaptiveCard',
            version: '1.4',
            body: [{ type: 'TextBlock', text: `Flowgate test message from channel ${ch.name}.`, wrap: true }],
          },
        },
      ],
    }),
};
