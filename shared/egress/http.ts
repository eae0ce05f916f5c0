import http from 'node:http';
import https from 'node:https';
import { tooDeep } from '../json-depth.ts';
import { StepError } from '../step-error.ts';
import { abortable, bareHost, checkUrl, compileAllowlist, pinnedLookup, type Resolved, resolveTarget } from './policy.ts';

export type HttpRequestInput = { method: string; url: string; headers: Record<string, string>; body?: string; timeoutMs: number };
export type HttpRequestResult = {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the response content-type is JSON and it parses, else text. */
  body: unknown;
};
export type HttpRequestOptions = {
  /** Operator allowlist (HTTP_STEP_ALLOWLIST): CIDRs/addresses, or host names (exact, case-insensitive). */
  allowlist: readonly string[];
  /** Aborted when the run is cancelled. */
  signal?: AbortSignal;
  /** Default 1 MiB. */
  maxResponseBytes?: number;
  /** Default 5. */
  maxRedirects?: number;
  /**
   * Where the request may go at all (the host bindings of the account secrets it carries): checked
   * for the URL before anything is resolved or sent, and for every redirect before it is followed.
   * Refused: `SECRET_NOT_ALLOWED`, nothing sent to that host.
   */
  hostAllowed?: (hostname: string) => boolean;
};

const notAllowed = () => new StepError('SECRET_NOT_ALLOWED', 'a secret the step reads may not be sent to this host');

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'flowgate-workflow/1';
/** Headers Node computes or that would change the framing or the target of the request. */
const STRIPPED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
]);
/** Dropped when a redirect turns the request into a GET without body. */
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];

function prepareHeaders(input: Record<string, string>): Record<string, string> {
  const entries = Object.entries(input)
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .filter(([name]) => !STRIPPED_HEADERS.has(name));
  // fromEntries defines own properties, so even a `__proto__` header stays a header.
  const out: Record<string, string> = Object.fromEntries(entries);
  if (!Object.hasOwn(out, 'user-agent')) out['user-agent'] = USER_AGENT;
  return out;
}

function dropHeaders(headers: Record<string, string>, names: readonly string[]) {
  for (const n of names) delete headers[n];
}

/** Send one request and wait for the response head. */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  addresses: Resolved[],
  onRequest: (req: http.ClientRequest) => void,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? https.request : http.request;
    let req: http.ClientRequest;
    try {
      req = request({
        protocol: url.protocol,
        hostname: bareHost(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        // A fresh connection per request: no pooled socket (possibly connected under another
        // allowlist) and no environment proxy, so the connection goes to the checked address.
        agent: false,
        lookup: pinnedLookup(addresses),
      });
    } catch (e) {
      // Invalid method or header (Node validates them synchronously).
      reject(new StepError('REQUEST_FAILED', `invalid request: ${errorMessage(e)}`));
      return;
    }
    onRequest(req);
    req.on('error', reject);
    req.on('response', (res) => {
      res.on('error', () => {}); // reported through the body reader or the abort
      resolve(res);
    });
    req.end(body);
  });
}

function tooLarge(max: number) {
  return new StepError('RESPONSE_TOO_LARGE', `the response is larger than ${max} bytes`);
}

/** Read the body, destroying the connection as soon as it exceeds `max` bytes. */
function readBody(res: http.IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      res.destroy();
      reject(tooLarge(max));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        res.destroy();
        reject(tooLarge(max));
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(new Error('the connection closed before the response was complete'));
    });
  });
}

/** Lower-case names (Node already lower-cases them), every value kept, repeated ones joined with ', '. */
function responseHeaders(res: http.IncomingMessage): Record<string, string> {
  return Object.fromEntries(Object.entries(res.headersDistinct).map(([name, values]) => [name.toLowerCase(), (values ?? []).join(', ')]));
}

const JSON_TYPE = /^(?:application\/(?:[\w.+-]+\+)?json|text\/json)$/i;

function decodeBody(bytes: Buffer, contentType: string | undefined): unknown {
  const [type = '', ...params] = (contentType ?? '').split(';').map((s) => s.trim());
  const charset = params
    .map((p) => /^charset\s*=\s*"?([^";]+)"?$/i.exec(p)?.[1])
    .find((c) => c !== undefined)
    ?.trim();
  let text: string;
  try {
    text = new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    text = new TextDecoder('utf-8').decode(bytes);
  }
  if (JSON_TYPE.test(type)) {
    try {
      const value: unknown = JSON.parse(text);
      // Nested past what the run's record and expressions can walk: kept as the text it came as.
      return tooDeep(value) === undefined ? value : text;
    } catch {
      return text;
    }
  }
  return text;
}

function errorMessage(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/**
 * Perform an `http_request` step's exchange under the SSRF rule (docs/workflows.md): https only unless
 * the allowlist permits the target; private, loopback, link-local, reserved and metadata addresses
 * refused after DNS resolution and on every redirect, the connection going to the checked address;
 * redirects followed manually; one timeout for the whole exchange; a byte cap on the body. The status
 * is not judged. Only ever rejects with a `StepError`.
 */
export async function performHttpRequest(input: HttpRequestInput, opts: HttpRequestOptions): Promise<HttpRequestResult> {
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const cancelled = () => new StepError('CANCELLED', 'the run was cancelled during the request');
  if (opts.signal?.aborted) throw cancelled();

  const ctl = new AbortController();
  const signal = ctl.signal;
  const timeoutMs = Number.isFinite(input.timeoutMs) ? Math.min(Math.max(input.timeoutMs, 1), 2_147_483_647) : 1;
  const timer = setTimeout(
    () => ctl.abort(new StepError('TIMEOUT', `the request did not complete within ${input.timeoutMs} ms`)),
    timeoutMs,
  );
  const onCancel = () => ctl.abort(cancelled());
  opts.signal?.addEventListener('abort', onCancel, { once: true });
  let inflight: http.ClientRequest | undefined;
  let response: http.IncomingMessage | undefined;
  const destroy = () => {
    response?.destroy();
    inflight?.destroy();
  };
  signal.addEventListener('abort', destroy, { once: true });

  let url: URL | undefined;
  try {
    url = checkUrl(input.url, 'the URL');
    if (opts.hostAllowed && !opts.hostAllowed(url.hostname)) throw notAllowed();
    let method = input.method.toUpperCase();
    let body = input.body;
    const headers = prepareHeaders(input.headers);
    const allow = compileAllowlist(opts.allowlist);
    for (let redirects = 0; ; redirects++) {
      const addresses = await resolveTarget(url, allow, signal);
      if (signal.aborted) throw signal.reason;
      const res = await abortable(
        send(url, method, headers, body, addresses, (req) => {
          inflight = req;
        }),
        signal,
      );
      response = res;
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && location !== undefined) {
        res.destroy(); // the body of a redirect is not read
        if (redirects >= maxRedirects) throw new StepError('TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects`);
        let target: URL;
        try {
          target = new URL(location, url);
        } catch {
          throw new StepError('INVALID_URL', 'the redirect location is not a valid URL');
        }
        const next = checkUrl(target, 'the redirect location');
        if (opts.hostAllowed && !opts.hostAllowed(next.hostname)) throw notAllowed();
        if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          dropHeaders(headers, BODY_HEADERS);
        }
        // Another origin gets none of the headers the definition set (any of them may carry a
        // credential), only our User-Agent and, when the body goes along (307/308), what describes it.
        if (next.origin !== url.origin) {
          dropHeaders(
            headers,
            Object.keys(headers).filter((n) => !(body !== undefined && BODY_HEADERS.includes(n))),
          );
          headers['user-agent'] = USER_AGENT;
        }
        url = next;
        continue;
      }
      const bytes = await abortable(readBody(res, maxBytes), signal);
      return { status, headers: responseHeaders(res), body: decodeBody(bytes, res.headers['content-type']) };
    }
  } catch (e) {
    destroy();
    if (signal.aborted) throw signal.reason instanceof StepError ? signal.reason : cancelled();
    if (e instanceof StepError) throw e;
    const host = url?.hostname ?? 'the target';
    throw new StepError('REQUEST_FAILED', `request to ${host} failed: ${errorMessage(e)}`);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onCancel);
    signal.removeEventListener('abort', destroy);
  }
}
