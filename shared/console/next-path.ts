/** Where the sign-in page may send a user back to: a console path of this origin, never another site. */
export function safeNext(next: string | null | undefined): string {
  if (!next) return '/console';
  try {
    const base = 'http://console.invalid';
    const url = new URL(next, base);
    const path = `${url.pathname}${url.search}`;
    const console = url.pathname === '/console' || url.pathname.startsWith('/console/');
    return url.origin === base && console && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\') ? path : '/console';
  } catch {
    return '/console';
  }
}
