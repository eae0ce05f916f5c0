// POST of the one-click link: the confirmation page's button (`confirm=1`) decides.
export { handler } from './link.ts';
