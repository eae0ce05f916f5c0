import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { claimForm, releaseForm } from '../db/entities/form-once.ts';
import { badRequest, conflict } from '../errors.ts';
import type { Principal } from './principal.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** A form id as the console's forms make them (a random UUID). */
export const FormId = z.uuid();
export const newFormId = () => randomUUID();

export const formAlreadySent = () =>
  conflict(
    'FORM_ALREADY_SENT',
    'This form was sent already (a reload of its result page sends it again): what it made is in the list, and what it showed once is not shown again.',
  );

/**
 * Do `act` once per form id and session: the id is claimed first (409 `FORM_ALREADY_SENT` when it was
 * before, and nothing is done); when `act` fails the claim is given back, so the corrected form can be
 * sent again. A browser re-POSTing a result page (a reload) so never makes a second key or member.
 */
export async function onceForForm<T>(p: SessionPrincipal, formId: string | null | undefined, act: () => Promise<T>): Promise<T> {
  const parsed = FormId.safeParse(formId);
  if (!parsed.success) throw badRequest('INVALID_FORM_ID', 'The form is incomplete: reload it and try again.');
  if (!(await claimForm(p.sessionId, parsed.data))) throw formAlreadySent();
  try {
    return await act();
  } catch (e) {
    await releaseForm(p.sessionId, parsed.data);
    throw e;
  }
}
