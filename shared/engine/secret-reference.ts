// Kept apart from secret-refs.ts (which parses expressions with jsonata) so the notifications worker,
// which only reads a target's reference, does not bundle the expression engine.

/** A notification's signing secret may be exactly this (or a literal `whsec_` secret). */
export const SECRET_REFERENCE = /^\{%\s*\$secrets\.([A-Za-z0-9_]+)\s*%\}$/;

/** The name a notification's secret refers to, if it is a `{% $secrets.NAME %}` reference. */
export const referencedSecret = (secret: string): string | undefined => SECRET_REFERENCE.exec(secret)?.[1];
