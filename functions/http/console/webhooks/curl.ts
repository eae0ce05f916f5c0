import type { webhookView } from '../../../../shared/domain/webhooks.ts';

// The curl example a webhook's page shows for its mode: a POSIX shell snippet that signs the body as
// the webhook checks it (docs/webhooks.md), reading the credential from an environment variable so
// that the page never holds it.

/** The variable the snippet reads the webhook's secret from. */
export const SECRET_VAR = 'FLOWGATE_WEBHOOK_SECRET';
/** The variable the snippet reads the bound API key's token from. */
export const KEY_VAR = 'FLOWGATE_API_KEY';

const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
/** HMAC-SHA256 hex of stdin with the secret in $FLOWGATE_WEBHOOK_SECRET. */
const hexMac = `openssl dgst -sha256 -hmac "$${SECRET_VAR}" -r | cut -d' ' -f1`;

/** What the snippet needs first, in words (an environment variable to set). */
export function curlNeeds(w: Pick<ReturnType<typeof webhookView>, 'authMode' | 'apiKeyId'>): string | undefined {
  if (w.authMode === 'api_key') return `${KEY_VAR}: the token of the bound key ${w.apiKeyId ?? ''} (shown once when the key was created)`;
  if (w.authMode === 'hmac') return `${SECRET_VAR}: the webhook's secret`;
  return undefined;
}

/** The snippet: it sends `body` to `url` as the webhook's mode and scheme require, and prints the answer. */
export function curlExample(w: Pick<ReturnType<typeof webhookView>, 'authMode' | 'signatureScheme'>, url: string): string {
  const body = `body='{"hello":"world"}'`;
  const post = (headers: string[]) =>
    [`curl -sS -X POST ${q(url)}`, `-H 'content-type: application/json'`, ...headers, `--data-raw "$body"`].join(' \\\n  ');
  if (w.authMode === 'open') return [body, post([])].join('\n');
  if (w.authMode === 'api_key') return [body, post([`-H "authorization: Bearer $${KEY_VAR}"`])].join('\n');
  switch (w.signatureScheme) {
    case 'github':
      return [body, `sig=$(printf '%s' "$body" | ${hexMac})`, post([`-H "X-Hub-Signature-256: sha256=$sig"`])].join('\n');
    case 'stripe':
      return [body, 'ts=$(date +%s)', `sig=$(printf '%s' "$ts.$body" | ${hexMac})`, post([`-H "Stripe-Signature: t=$ts,v1=$sig"`])].join(
        '\n',
      );
    case 'slack':
      return [
        body,
        'ts=$(date +%s)',
        `sig=$(printf '%s' "v0:$ts:$body" | ${hexMac})`,
        post([`-H "X-Slack-Request-Timestamp: $ts"`, `-H "X-Slack-Signature: v0=$sig"`]),
      ].join('\n');
    case 'standard-webhooks':
      return [
        body,
        'id=msg_$(date +%s)_$$; ts=$(date +%s)',
        `key=$(printf '%s' "\${${SECRET_VAR}#whsec_}" | base64 -d | od -An -tx1 | tr -d ' \\n')`,
        `sig=$(printf '%s' "$id.$ts.$body" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | base64)`,
        post([`-H "webhook-id: $id"`, `-H "webhook-timestamp: $ts"`, `-H "webhook-signature: v1,$sig"`]),
      ].join('\n');
    default:
      return [body, `sig=$(printf '%s' "$body" | ${hexMac})`, post([`-H "X-Webhook-Signature: sha256=$sig"`])].join('\n');
  }
}
