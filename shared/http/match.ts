/** Match a concrete path against an API Gateway route path (`/a/{id}`); the parameters or undefined. */
export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const t = template.split('/');
  const p = path.split('/');
  if (t.length !== p.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < t.length; i++) {
    const seg = t[i] as string;
    const val = p[i] as string;
    if (seg.startsWith('{') && seg.endsWith('}')) {
      if (val === '') return undefined;
      try {
        params[seg.slice(1, -1)] = decodeURIComponent(val);
      } catch {
        return undefined;
      }
    } else if (seg !== val) return undefined;
  }
  return params;
}
