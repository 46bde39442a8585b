import { useEffect, useState } from 'preact/hooks';
import type { RoomList, RtcParticipant, RtcParticipantQuality, RtcPublishedStream, RtcRoom } from '@rtc/protocol';
import { api } from '../api.ts';
import { EmptyState, ErrorText, Field, formatTime, TableScroll, useAction, useConfirm } from '../ui.tsx';
import { myParticipant } from './test-room.tsx';

const BANS: readonly (readonly [string, string])[] = [['0', 'No ban: may rejoin with a new token'], ['600', '10 minutes'], ['3600', '1 hour'], ['86400', '1 day']];

/** Stream ids typed as "1, 2": integers, no repeats. */
function streamIds(text: string): number[] {
  const ids = text.split(/[\s,]+/).filter(Boolean).map(Number);
  if (ids.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('Stream ids are whole numbers from 1, separated by commas.');
  return [...new Set(ids)];
}

/** A bitrate as people read it: 1.2 Mbit/s, 56 kbit/s. */
export function formatBitrate(bps: number): string {
  if (bps >= 1_000_000) return `${(bps / 1_000_000).toFixed(1)} Mbit/s`;
  if (bps >= 1_000) return `${Math.round(bps / 1_000)} kbit/s`;
  return `${bps} bit/s`;
}

const percent = (fraction: number | null): string => (fraction === null ? '—' : `${(fraction * 100).toFixed(1)} %`);

/** What a stream is: its kind and source, its layers as measured. */
function StreamLine({ stream }: { stream: RtcPublishedStream }) {
  const layers = stream.layers.map((l) => [l.rid ?? 'single', l.width && l.height ? `${l.width}×${l.height}` : '', l.bitrate ? formatBitrate(l.bitrate) : '']
    .filter(Boolean).join(' '));
  return (
    <>
      <span>#{stream.stream_id} {stream.kind} · {stream.source}</span>
      {stream.muted && <span class="badge warn">muted</span>}
      {layers.length > 0 && <><br /><small>layers: {layers.join(', ')}</small></>}
    </>
  );
}

/** Where the room is held: its one media node, or every node of a room that spans several (it started on the first). */
function mediaNodesLine(room: RtcRoom): string {
  const nodes = room.media_nodes;
  if (nodes.length > 1) return ` · media nodes ${nodes.join(', ')}`;
  return room.media_node ? ` · media node ${room.media_node}` : '';
}

/** The participant's media quality, as its media node measured it at its last heartbeat. */
function QualityCell({ quality }: { quality: RtcParticipantQuality | null }) {
  if (!quality) return <small>measuring…</small>;
  const layers = Object.entries(quality.layers).map(([id, rid]) => `#${id}: ${rid}`);
  return (
    <dl class="quality">
      <div><dt>In</dt><dd>{formatBitrate(quality.bitrate_in)}</dd></div>
      <div><dt>Out</dt><dd>{formatBitrate(quality.bitrate_out)}</dd></div>
      <div><dt>Loss</dt><dd>{percent(quality.packet_loss_in)} in, {percent(quality.packet_loss_out)} out</dd></div>
      <div><dt>Round trip</dt><dd>{quality.rtt_ms === null ? '—' : `${quality.rtt_ms} ms`}</dd></div>
      {layers.length > 0 && <div><dt>Layers received</dt><dd>{layers.join(', ')}</dd></div>}
    </dl>
  );
}

/**
 * The project's live rooms and participants, refreshed every two seconds while the page is visible:
 * published streams and quality; remove (with an optional ban), change permissions, mute a stream, end
 * the room, each confirmed in the page (room API, docs/reference/room-api.md).
 */
export function RoomsPage({ projectId }: { projectId: string }) {
  const [rooms, setRooms] = useState<readonly RtcRoom[] | undefined>(undefined);
  const load = useAction();
  const confirm = useConfirm();
  const [done, setDone] = useState('');
  const base = `/v1/projects/${projectId}/rooms`;
  const reload = async (): Promise<void> => setRooms((await api<RoomList>('GET', base)).rooms);
  useEffect(() => {
    void load.run(reload);
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload().catch(() => undefined);
    }, 2000);
    return () => clearInterval(timer);
  }, [projectId]);
  const me = myParticipant(projectId);
  const path = (room: RtcRoom, p: RtcParticipant): string => `${base}/${encodeURIComponent(room.room_id)}/participants/${encodeURIComponent(p.participant_id)}`;

  const remove = (room: RtcRoom, p: RtcParticipant): void => confirm.ask({
    title: `Remove ${p.user_id} from ${room.room_id}?`, confirm: `Remove ${p.user_id}`, danger: true,
    message: <p>Their connection closes within about a second and the tokens they hold for this room stop working. A ban also
      refuses the tokens issued to them until it ends.</p>,
    body: <Field label="Ban"><select name="ban">{BANS.map(([v, l]) => <option key={v} value={v}>{l}</option>)}</select></Field>,
    onConfirm: async (fields) => {
      const ban = Number(fields.get('ban') ?? 0);
      const removed = await api<{ banned_until?: number }>('POST', `${path(room, p)}/remove`, ban > 0 ? { ban_seconds: ban } : undefined);
      document.body.dataset['removeAnsweredAt'] = String(Date.now());
      setDone(`${p.user_id} was removed${removed.banned_until ? `, banned until ${formatTime(removed.banned_until)}` : ''}.`);
      await reload();
    },
  });

  const permissions = (room: RtcRoom, p: RtcParticipant): void => confirm.ask({
    title: `Permissions of ${p.user_id}`, confirm: 'Save permissions',
    message: <p>Applies at once, without a reconnection: streams no longer allowed stop flowing.</p>,
    body: (
      <>
        <Field label="May publish streams" hint="Stream ids separated by commas; empty: publishes nothing.">
          <input name="publish" defaultValue={p.publish_streams.join(', ')} disabled={p.role === 'audience'} />
        </Field>
        <label class="check"><input type="checkbox" name="room" defaultChecked={p.subscribe_room} /> Receives the whole room</label>
        <Field label="Or receives only streams" hint="Used when the whole room is not ticked.">
          <input name="subscribe" defaultValue={p.subscribe_streams.join(', ')} />
        </Field>
      </>
    ),
    onConfirm: async (fields) => {
      const whole = fields.get('room') === 'on';
      await api('PATCH', path(room, p), {
        ...(p.role === 'audience' ? {} : { publish_streams: streamIds(String(fields.get('publish') ?? '')) }),
        ...(whole ? { subscribe_room: true } : { subscribe_streams: streamIds(String(fields.get('subscribe') ?? '')) }),
      });
      setDone(`The permissions of ${p.user_id} were changed.`);
      await reload();
    },
  });

  const mute = (room: RtcRoom, p: RtcParticipant, stream: RtcPublishedStream): void => {
    const muted = !stream.muted;
    const what = `stream ${stream.stream_id} (${stream.kind}, ${stream.source}) of ${p.user_id}`;
    confirm.ask({
      title: `${muted ? 'Mute' : 'Unmute'} ${what}?`, confirm: muted ? 'Mute stream' : 'Unmute stream',
      message: muted
        ? <p>The media server stops forwarding it to everyone in the room at once; it stays published and can be unmuted.</p>
        : <p>The media server forwards it again; a video resumes from its next key frame.</p>,
      onConfirm: async () => {
        await api('POST', `${path(room, p)}/streams/${stream.stream_id}/mute`, { muted });
        setDone(`The ${what} was ${muted ? 'muted' : 'unmuted'}.`);
        await reload();
      },
    });
  };

  const end = (room: RtcRoom): void => confirm.ask({
    title: `End ${room.room_id}?`, confirm: 'End room', danger: true,
    message: <p>Everyone in it is disconnected within about a second, and every token issued for it until now stops working.
      New tokens open it again.</p>,
    onConfirm: async () => {
      const ended = await api<{ participants: number }>('POST', `${base}/${encodeURIComponent(room.room_id)}/end`);
      setDone(`${room.room_id} was ended (${ended.participants} participant${ended.participants === 1 ? '' : 's'} disconnected).`);
      await reload();
    },
  });

  return (
    <section aria-labelledby="rooms-title">
      <h1 id="rooms-title">Rooms</h1>
      <p class="lead">Rooms with someone in them right now, refreshed every few seconds.</p>
      <ErrorText error={load.error} />
      <p role="status">{done}</p>
      {confirm.dialog}
      {rooms && rooms.length === 0 && (
        <EmptyState title="No live room">
          <p>A room is listed while someone is in it. Join the <a href={`#/projects/${projectId}/test-room`}>test room</a> to see one here.</p>
        </EmptyState>
      )}
      {rooms?.map((room) => (
        <section key={room.room_id} class="card room" aria-label={`Room ${room.room_id}`}>
          <div class="room-head">
            <h2>{room.room_id}</h2>
            <button type="button" class="danger" onClick={() => end(room)}>End room</button>
          </div>
          <p><small>Started {formatTime(room.started_at)}{mediaNodesLine(room)} · {room.participants.length} participant{room.participants.length === 1 ? '' : 's'}</small></p>
          <TableScroll label={`Participants of ${room.room_id}`}>
            <table>
              <thead><tr><th scope="col">Participant</th><th scope="col">Role</th><th scope="col">May publish</th><th scope="col">Receives</th><th scope="col">Published streams</th><th scope="col">Quality</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                {room.participants.map((p) => (
                  <tr key={p.participant_id}>
                    <td><strong>{p.user_id}</strong>{p.participant_id === me && <span class="badge you">you</span>}<br /><small><code>{p.participant_id}</code></small></td>
                    <td data-label="Role">{p.role}</td>
                    <td data-label="May publish">{p.publish_streams.length > 0 ? p.publish_streams.join(', ') : 'nothing'}</td>
                    <td data-label="Receives">{p.subscribe_room ? 'the whole room' : p.subscribe_streams.length > 0 ? p.subscribe_streams.join(', ') : 'nothing'}</td>
                    <td data-label="Published streams">
                      {p.streams.length === 0 ? 'none' : (
                        <ul class="streams">
                          {p.streams.map((st) => (
                            <li key={st.stream_id}>
                              <StreamLine stream={st} />
                              <button type="button" class="secondary small" aria-label={`${st.muted ? 'Unmute' : 'Mute'} stream ${st.stream_id} of ${p.user_id}`}
                                onClick={() => mute(room, p, st)}>{st.muted ? 'Unmute' : 'Mute'}</button>
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    <td data-label="Quality"><QualityCell quality={p.quality} /></td>
                    <td class="actions">
                      <button type="button" class="secondary" aria-label={`Permissions of ${p.user_id}`} onClick={() => permissions(room, p)}>Permissions</button>
                      <button type="button" class="danger" aria-label={`Remove ${p.user_id}`} onClick={() => remove(room, p)}>Remove</button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </section>
      ))}
    </section>
  );
}
