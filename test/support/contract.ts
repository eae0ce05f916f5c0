import { Ajv2020 } from 'ajv/dist/2020.js';
import { routes } from '../../functions/routes.ts';
import { openApiDocument } from '../../shared/http/openapi.ts';
import { isConsolePage, type Route } from '../../shared/http/route.ts';
import { matchPath } from '../../shared/http/match.ts';

/**
 * The contract check every answer the suites receive goes through (`invoke` in-process, and every
 * HTTP response from a local server, `checkFetchedResponses`): its status must be one the OpenAPI
 * document lists for the route, and its body must match that response's schema (a problem's `code`
 * one of those listed), its content type one the document gives that response (a refusal of an HTML
 * page is `text/html`, not problem+json). A mismatch throws, failing the test that made the request.
 * Not checked: 5xx (faults the tests cause on purpose), paths no route has, the console's pages, the body of what is not JSON.
 */
type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<
          string,
          { content?: Record<string, { schema: object }>; 'x-deprecated-content'?: Record<string, { schema: object }> }
        >;
      }
    >
  >;
  components: object;
};
let built: Doc | undefined;
// Built on first use: the setup file installs the check before the test environment is complete.
const document = () => {
  built ??= openApiDocument(routes) as unknown as Doc;
  return built;
};
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<object, ReturnType<typeof ajv.compile>>();
const validatorOf = (schema: object) => {
  let v = validators.get(schema);
  if (!v) {
    // Local `#/components/...` references resolve against the document's components.
    v = ajv.compile({ ...schema, components: document().components });
    validators.set(schema, v);
  }
  return v;
};
// Static paths first: `/api/webhook-trigger/approval` is not a webhook id.
const byParams = [...(routes as readonly Route[])].sort((a, b) => a.path.split('{').length - b.path.split('{').length);

export function checkContract(method: string, path: string, status: number, contentType: string | undefined, body: string | undefined) {
  if (status >= 500 || status === 304) return;
  const verb = method.toUpperCase() === 'HEAD' ? 'HEAD' : method.toUpperCase();
  const route = byParams.find((r) => r.method === verb && matchPath(r.path, path.split('?')[0] as string));
  // The console's pages are not the API: HTML for browsers, checked by the console's own tests.
  if (!route || isConsolePage(route)) return;
  const where = `${verb} ${route.path} → ${status}`;
  const answer = document().paths[route.path]?.[verb.toLowerCase()]?.responses[String(status)];
  if (!answer) throw new Error(`contract: ${where} is not in the OpenAPI document: ${String(body).slice(0, 300)}`);
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  // API Gateway's own answers (`{"message": ...}`: a body over its limit, its throttle) are not the function's.
  if (type === 'application/json' && (status === 413 || status === 429)) return;
  // A deprecated media type the route still answers (`x-deprecated-content`) is documented too, outside `content`.
  const media = { ...answer.content, ...answer['x-deprecated-content'] };
  const documented = Object.keys(media);
  if (type && documented.length > 0 && !documented.includes(type))
    throw new Error(`contract: ${where} answers ${type}, documented as ${documented.join(', ')}: ${String(body).slice(0, 300)}`);
  const schema = type ? media[type]?.schema : undefined;
  if (!schema || !body || !/^application\/(.+\+)?json$/.test(type ?? '')) return;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`contract: ${where} says ${type} but is not JSON: ${body.slice(0, 300)}`);
  }
  const validate = validatorOf(schema);
  if (!validate(json))
    throw new Error(`contract: ${where} does not match its schema: ${ajv.errorsText(validate.errors)}; body ${body.slice(0, 500)}`);
}

/** Check every response a local server (127.0.0.1, localhost) sends this process's `fetch` (test setup installs it once). */
export function checkFetchedResponses() {
  const original = globalThis.fetch;
  if ((original as { contractChecked?: boolean }).contractChecked) return;
  const checked = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const res = await original(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    if ((url.hostname === '127.0.0.1' || url.hostname === 'localhost') && url.pathname.startsWith('/api/')) {
      const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
      const body = method.toUpperCase() === 'HEAD' ? undefined : await res.clone().text();
      checkContract(method, url.pathname, res.status, res.headers.get('content-type') ?? undefined, body);
    }
    return res;
  };
  globalThis.fetch = Object.assign(checked, { contractChecked: true }) as unknown as typeof fetch;
}
