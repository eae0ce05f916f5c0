import { channelKinds } from '../../../../../shared/channels/index.ts';
import type { ChannelSetting } from '../../../../../shared/channels/types.ts';
import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../../shared/console/render.tsx';
import { CHANNEL_TYPES, type ChannelType } from '../../../../../shared/domain/read-types.ts';
import { described, Field, type FormErrors, FormAlert, firstInvalid } from '../../parts/labelled-field.tsx';

// A channel's form: its name and its kind's settings (the kind's adapter says which; write-only ones
// show the API's mask, which sent back unchanged keeps the stored value).

/** A kind's name as people read it. */
export const kindName = (t: string) => `${t.charAt(0).toUpperCase()}${t.slice(1)}`;

const SETTING_TEXT: Record<ChannelSetting, { label: string; hint: string }> = {
  botToken: { label: 'Bot token', hint: "The Slack app's bot token (xoxb-…). Write-only: shown masked." },
  signingSecret: { label: 'Signing secret', hint: "The Slack app's signing secret. Write-only: shown masked." },
  defaultChannel: { label: 'Default channel', hint: 'Where an approval step without "to" posts: #name or a channel id. Optional.' },
  from: { label: 'From address', hint: "The sender: an address of the stack's verified SES identity." },
  webhookUrl: { label: 'Webhook URL', hint: 'The Teams Workflows webhook URL (https). Write-only: shown masked.' },
};

export const settingsOf = (type: ChannelType) => Object.keys(channelKinds[type].settings) as ChannelSetting[];
export const isWriteOnly = (type: ChannelType, f: ChannelSetting) => f in channelKinds[type].secrets;
export const channelFields = (type: ChannelType) => ['name', ...settingsOf(type)];

export type ChannelDraft = { type: ChannelType; name: string } & Partial<Record<ChannelSetting, string>>;

/** The name and settings fields, as typed (or as the view shows them). */
export function ChannelFields({ draft, errors }: { draft: ChannelDraft; errors: FormErrors }) {
  const fields = channelFields(draft.type);
  const focus = firstInvalid(errors, fields);
  return (
    <>
      <Field id="name" label="Name" hint="Unique in the account; approval steps name it in notify[].channel." error={errors.fields.name}>
        <input
          type="text"
          name="name"
          maxLength={80}
          value={draft.name}
          required
          autocomplete="off"
          {...described('name', errors.fields.name, true, focus === 'name')}
        />
      </Field>
      {settingsOf(draft.type).map((f) => (
        <Field key={f} id={f} label={SETTING_TEXT[f].label} hint={SETTING_TEXT[f].hint} error={errors.fields[f]}>
          <input
            type="text"
            name={f}
            value={draft[f] ?? ''}
            maxLength={2048}
            autocomplete="off"
            spellcheck={false}
            required={channelKinds[draft.type].settings[f] === true}
            {...described(f, errors.fields[f], true, focus === f)}
          />
        </Field>
      ))}
    </>
  );
}

export function channelCreatePage(session: ConsoleSession, draft: ChannelDraft, errors: FormErrors, status = 200) {
  return page(
    { title: `Create ${kindName(draft.type)} channel`, session, section: '/console/channels', status },
    <>
      <nav aria-label="Kind of channel" class="scope">
        <ul>
          {CHANNEL_TYPES.map((t) => (
            <li key={t}>
              <a href={`/console/channels/new?type=${t}`} aria-current={t === draft.type ? 'page' : undefined}>
                {kindName(t)}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <form method="post" action="/console/channels/new">
        <FormAlert errors={errors} what="The channel was not created." />
        <Csrf session={session} />
        <input type="hidden" name="type" value={draft.type} />
        <ChannelFields draft={draft} errors={errors} />
        <div class="actions">
          <button type="submit">Create channel</button>
          <a href="/console/channels">Cancel</a>
        </div>
      </form>
    </>,
  );
}
