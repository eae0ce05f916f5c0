import type { ChannelSetting } from '../../../../../shared/channels/types.ts';
import { CHANNEL_TYPES, type ChannelType } from '../../../../../shared/domain/read-types.ts';
import type { FieldError } from '../../../../../shared/errors.ts';
import { CreateChannelBody, UpdateChannelBody } from '../../../../../shared/schemas/channels.ts';
import { type ChannelDraft, isWriteOnly, settingsOf } from './form-view.tsx';
import { isMasked } from '../../../../../shared/channels/types.ts';

// The channel forms as sent, and the API's bodies they stand for (checked by the API's own schemas).

export const typeOf = (v: string | null | undefined): ChannelType =>
  (CHANNEL_TYPES as readonly string[]).includes(v ?? '') ? (v as ChannelType) : CHANNEL_TYPES[0];

export function channelDraftOf(form: URLSearchParams, type: ChannelType): ChannelDraft {
  return {
    type,
    name: (form.get('name') ?? '').trim(),
    ...Object.fromEntries(settingsOf(type).map((f) => [f, (form.get(f) ?? '').trim()])),
  };
}

const issues = (e: { issues: { path: PropertyKey[]; message: string }[] }): FieldError[] =>
  e.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));

/** Empty optional settings are left out (a create) or removed (an update: `null`). */
export function createBody(d: ChannelDraft) {
  const body: Record<string, string> = { type: d.type, name: d.name };
  for (const f of settingsOf(d.type)) if (d[f]) body[f] = d[f] as string;
  const parsed = CreateChannelBody.safeParse(body);
  return parsed.success ? ({ ok: true, body: parsed.data } as const) : ({ ok: false, errors: issues(parsed.error) } as const);
}

export function updateBody(d: ChannelDraft, optional: (f: ChannelSetting) => boolean) {
  const body: Record<string, string | null> = { name: d.name };
  for (const f of settingsOf(d.type)) body[f] = d[f] ? (d[f] as string) : optional(f) ? null : '';
  const parsed = UpdateChannelBody.safeParse(body);
  return parsed.success ? ({ ok: true, body: parsed.data } as const) : ({ ok: false, errors: issues(parsed.error) } as const);
}

/**
 * A refused form is shown again without the write-only values typed into it (they never go back to
 * the browser): those fields are empty, to be typed again; a mask the view showed stays (it keeps the stored value).
 */
export function withoutWriteOnly(d: ChannelDraft): { draft: ChannelDraft; cleared: boolean } {
  const out: ChannelDraft = { ...d };
  let cleared = false;
  for (const f of settingsOf(d.type))
    if (isWriteOnly(d.type, f) && d[f] && !isMasked(d[f] as string)) {
      out[f] = '';
      cleared = true;
    }
  return { draft: out, cleared };
}
