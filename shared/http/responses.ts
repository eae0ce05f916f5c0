import type { HttpResult } from './context.ts';

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

export const ok = (body: unknown) => json(200, body);
export const created = (body: unknown, location?: string) => json(201, body, location ? { location } : {});
export const noContent = (): HttpResult => ({ statusCode: 204 });
/** A 200 of NDJSON lines (an export), never cached. */
export const ndjsonOk = (body: string): HttpResult => ({
  statusCode: 200,
  headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' },
  body,
});
