/** Escape text for HTML element content and attribute values (pages, mails). */
export const escapeHtml = (s: string) => s.replace(/[&<>"'`=/]/g, (c) => `&#${c.charCodeAt(0)};`);
