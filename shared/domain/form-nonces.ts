import { randomBytes } from 'node:crypto';
import { claimFormNonce, formNonceObject, releaseFormNonce, settleFormNonce } from '../db/entities/form-nonce.ts';
import { AppError, badRequest } from '../errors.ts';
import type { Principal } from './principal.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** A form's nonce: base64url of 16 random bytes (`newFormNonce`). */
export const FORM_NONCE = /^[A-Za-z0-9_-]{22}$/;
export const newFormNonce = () => randomBytes(16).toString('base64url');

/** The form sent with this nonce was handled already: `objectId` is what it created, when it did. */
export const formAlreadySent = (objectId: string | undefined) =>
  new AppError('conflict', 'FORM_ALREADY_SENT', 'Sent already', 'This form was sent already, and is not sent twice.', {
    body: objectId ? { objectId } : {},
  });

/**
 * Run `create` once per form nonce: the nonce is claimed first (a second send of the same form, such as
 * a reload of the page its POST answered, gets 409 `FORM_ALREADY_SENT`), recorded with what `create`
 * made, and given back when `create` refuses (the corrected form may be sent again).
 */
export async function onceForForm<T>(
  p: SessionPrincipal,
  nonce: string,
  create: () => Promise<T>,
  idOf: (t: T) => string,
  now = Date.now(),
) {
  if (!FORM_NONCE.test(nonce))
    throw badRequest('FORM_NONCE_INVALID', 'The form lacks its one-time value: open the form again.', [
      { path: 'nonce', message: 'missing or malformed' },
    ]);
  if (!(await claimFormNonce(p.accountId, nonce, p.userId, now))) throw formAlreadySent(await formNonceObject(p.accountId, nonce));
  let made: T;
  try {
    made = await create();
  } catch (e) {
    await releaseFormNonce(p.accountId, nonce);
    throw e;
  }
  await settleFormNonce(p.accountId, nonce, idOf(made));
  return made;
}
