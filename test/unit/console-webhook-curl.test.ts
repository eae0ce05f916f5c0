import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generatedSecret } from '../../functions/http/console/webhooks/form-data.ts';
import { curlExample, KEY_VAR, SECRET_VAR } from '../../functions/http/console/webhooks/curl.ts';
import { SIGNATURE_SCHEMES } from '../../shared/db/entities/webhook.ts';
import { verifySignature } from '../../shared/http/webhook-senders.ts';

/**
 * The curl example a webhook's page shows, run by bash as a user would paste it (with `curl` replaced by
 * a function that prints what it would send): every scheme's request carries a signature the trigger
 * accepts, made with the secret the form makes for that scheme; a keyed one the bearer key; an open one nothing.
 */

const run = promisify(execFile);
const URL_SHOWN = 'https://flowgate.example/api/webhooks/wh_01abc/trigger';

/** What the snippet's curl would send: its URL, headers (lower-cased names) and body. */
async function sent(script: string, vars: Record<string, string>) {
  const fake = `curl() { for a in "$@"; do printf '%s\\0' "$a"; done; }\n`;
  const { stdout } = await run('bash', ['-c', fake + script], { env: { ...process.env, ...vars } });
  const args = stdout.split('\0').slice(0, -1);
  const headers: Record<string, string> = {};
  let body = '';
  let url = '';
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-H') {
      const h = args[++i] as string;
      headers[h.slice(0, h.indexOf(':')).toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
    } else if (a === '--data-raw') body = args[++i] as string;
    else if (a === '-X') i++;
    else if (a.startsWith('http')) url = a;
  }
  return { url, headers, body };
}

describe('the curl example', () => {
  it.each(SIGNATURE_SCHEMES)('%s: signed as the trigger checks it, with the secret the form makes', async (scheme) => {
    const secret = generatedSecret(scheme);
    const { url, headers, body } = await sent(curlExample({ authMode: 'hmac', signatureScheme: scheme }, URL_SHOWN), {
      [SECRET_VAR]: secret,
    });
    expect(url).toBe(URL_SHOWN);
    expect(headers['content-type']).toBe('application/json');
    expect(JSON.parse(body)).toEqual({ hello: 'world' });
    expect(() => verifySignature(scheme, secret, headers, Buffer.from(body))).not.toThrow();
    // Another secret's signature is refused: the example signs with the one given.
    expect(() => verifySignature(scheme, generatedSecret(scheme), headers, Buffer.from(body))).toThrow();
  });

  it('a typed secret with shell metacharacters is read from the variable, not pasted into the script', async () => {
    const secret = `it's "$(rm -rf /)" \`x\` secret`;
    const { headers, body } = await sent(curlExample({ authMode: 'hmac', signatureScheme: 'legacy-hmac' }, URL_SHOWN), {
      [SECRET_VAR]: secret,
    });
    expect(() => verifySignature('legacy-hmac', secret, headers, Buffer.from(body))).not.toThrow();
  });

  it('a key-bound webhook: the bound key as a bearer token; an open one: no credential', async () => {
    const keyed = await sent(curlExample({ authMode: 'api_key', signatureScheme: null }, URL_SHOWN), { [KEY_VAR]: 'tok_123' });
    expect(keyed.headers.authorization).toBe('Bearer tok_123');
    const open = await sent(curlExample({ authMode: 'open', signatureScheme: null }, URL_SHOWN), {});
    expect(Object.keys(open.headers)).toEqual(['content-type']);
  });

  it('a URL with a quote stays one argument', async () => {
    const { url } = await sent(curlExample({ authMode: 'open', signatureScheme: null }, "https://x.example/a'b"), {});
    expect(url).toBe("https://x.example/a'b");
  });
});
