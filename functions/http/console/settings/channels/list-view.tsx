import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { Table, Time } from '../../../../../shared/console/components.tsx';
import { page } from '../../../../../shared/console/render.tsx';
import type { ChannelSettings } from '../../../../../shared/channels/types.ts';
import type { channelView } from '../../../../../shared/domain/channels.ts';
import { kindName } from './form-view.tsx';

// The channels list: each channel's name (to its page), kind, where it sends, when it changed.

export type ChannelView = ReturnType<typeof channelView> & ChannelSettings & { interactionsUrl?: string };

/** Where a channel sends, as its view may show it (masked where write-only). */
export const sendsTo = (c: ChannelView) => c.defaultChannel ?? c.from ?? c.webhookUrl ?? '—';

export function channelsPage(session: ConsoleSession, channels: ChannelView[]) {
  const admin = session.principal.role === 'admin';
  return page(
    { title: 'Channels', session, section: '/console/channels' },
    <section>
      <p>Approval steps send their messages through these channels (notify[].channel names one).</p>
      {admin ? (
        <p>
          <a href="/console/channels/new">Create channel</a>
        </p>
      ) : (
        <p class="muted">Only admins create, change, test and delete channels.</p>
      )}
      {channels.length === 0 ? (
        <p>No channels yet.</p>
      ) : (
        <Table caption="Approval channels by name">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Sends to</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {channels.map((c) => (
              <tr key={c.id}>
                <th scope="row">
                  <a href={`/console/channels/${c.id}`}>{c.name}</a>
                </th>
                <td>{kindName(c.type)}</td>
                <td>
                  <code>{sendsTo(c)}</code>
                </td>
                <td>
                  <Time ms={c.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>,
  );
}
