import type { TokenResponse } from '@rtc/protocol';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { MediaSession, RemoteParticipant } from '@rtc/app-sdk';
import { CallView, DevicePicker, ownStreams, useCall, useDevices } from '../call.tsx';
import { CopyButton, EmptyState, ErrorText, Field, useAction } from '../ui.tsx';

interface Invitation {
  readonly invitation: string;
  readonly room_id: string;
  readonly expires_at: number;
}

/** Who this page is in the test room, for the Rooms page to mark as "you". */
let me: { readonly projectId: string; readonly participantId: string } | undefined;

const changeListeners = new Set<() => void>();

/** Called when the test room's call joins or leaves, or somebody joins or leaves it: live figures refresh then. */
export function onTestRoomChange(listener: () => void): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

export function myParticipant(projectId: string): string | undefined {
  return me?.projectId === projectId ? me.participantId : undefined;
}

/**
 * Joins a room of the project with a temporary token (no App Secret) and the app SDK: the camera and
 * microphone chosen, every other participant's video and sound, and a share link that lets another
 * device join with a one-use invitation (docs/console.md, "Test room").
 */
export function TestRoom({ projectId, archived, visible }: { projectId: string; archived: boolean; visible: boolean }) {
  const [room, setRoom] = useState('test-room');
  const [user, setUser] = useState(() => `console-${Math.random().toString(36).slice(2, 8)}`);
  const [invitation, setInvitation] = useState<Invitation | undefined>(undefined);
  const call = useCall();
  const devices = useDevices(visible || call.session !== undefined);
  const action = useAction();
  const share = useAction();
  useEffect(() => {
    me = call.session ? { projectId, participantId: call.session.participantId } : undefined;
  }, [call.session]);
  useEffect(() => {
    for (const listener of changeListeners) listener();
  }, [call.session, call.people.length]);

  const join = (): Promise<void> => action.run(async () => {
    const media = devices.media;
    if (!media) throw new Error('The camera and microphone are not available yet: allow them in the browser and try again.');
    const streams = ownStreams();
    const getToken = (): Promise<TokenResponse> => api<TokenResponse>('POST', `/v1/projects/${projectId}/temporary-token`, {
      room_id: room, user_id: user, role: 'host', publish_streams: streams, subscribe_room: true, ttl_seconds: 600,
    });
    await call.join(await getToken(), media, getToken);
  });
  const link = invitation && `${location.origin}/#/join/${invitation.invitation}`;

  return (
    <section aria-labelledby="room-title">
      <h1 id="room-title">Test room</h1>
      <p class="lead">Join a room of this project from this browser with a temporary token: no App Secret needed. Then bring a
        second device in with a share link to see a call work.</p>
      <DevicePicker devices={devices} disabled={call.session !== undefined} />
      <ErrorText error={devices.error} />
      {!call.session && (
        <form class="inline" onSubmit={(e) => { e.preventDefault(); void join(); }}>
          <Field label="Room"><input required maxLength={64} value={room} onInput={(e) => setRoom(e.currentTarget.value)} /></Field>
          <Field label="Your user id"><input required maxLength={64} value={user} onInput={(e) => setUser(e.currentTarget.value)} /></Field>
          <button type="submit" disabled={action.busy || archived}>Join test room</button>
        </form>
      )}
      <ErrorText error={action.error} />
      <CallView call={call} media={devices.media} user={user} leaveLabel="Leave room" />
      {call.session && (
        <>
          <h2>In the room</h2>
          <InTheRoom self={call.session} people={call.people} />
          {call.people.length === 0 && (
            <EmptyState title="Nobody else is here yet">
              <p>Open the share link below on your phone or another computer, or open this console in a second tab and join
                the room <strong>{room}</strong>.</p>
            </EmptyState>
          )}
          {call.people.length > 0 && (
            <p>Remove someone, end the room or change permissions on the <a href={`#/projects/${projectId}/rooms`}>Rooms</a> page.</p>
          )}
        </>
      )}
      <section aria-labelledby="share-title" class="card">
        <h2 id="share-title">Share link</h2>
        <p>A link that lets one other device join <strong>{room}</strong> with a temporary token of its own. It works once,
          for ten minutes, and carries no secret of the project.</p>
        <button type="button" disabled={share.busy || archived} onClick={() => void share.run(async () => {
          setInvitation(await api<Invitation>('POST', `/v1/projects/${projectId}/invitations`, { room_id: room }));
        })}>Create share link</button>
        <ErrorText error={share.error} />
        {link && invitation && (
          <div class="share">
            <Field label="Share link" hint={`Works once, until ${new Date(invitation.expires_at * 1000).toLocaleTimeString()}.`}>
              <input readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
            </Field>
            <CopyButton text={link} label="Copy share link" />
            <a href={link} target="_blank" rel="noopener noreferrer">Open in a new tab</a>
          </div>
        )}
      </section>
    </section>
  );
}

/** Everyone in the call, this page's own participant first, marked "you". */
function InTheRoom({ self, people }: { self: MediaSession; people: readonly RemoteParticipant[] }) {
  return (
    <ul class="people" aria-label="In the room">
      <li key={self.participantId}>{self.userId} <small>{self.role} · you</small></li>
      {people.map((p) => <li key={p.participantId}>{p.userId} <small>{p.role}</small></li>)}
    </ul>
  );
}
