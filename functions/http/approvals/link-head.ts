// HEAD of the one-click link: the confirmation page's status and headers.
export { handler } from './link.ts';
