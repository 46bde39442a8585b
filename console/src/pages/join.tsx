import type { TokenResponse } from '@rtc/protocol';
import { useState } from 'preact/hooks';
import { publicPost } from '../api.ts';
import { CallView, DevicePicker, useCall, useDevices } from '../call.tsx';
import { EmptyState, ErrorText, useAction } from '../ui.tsx';

/**
 * The page a share link opens (`#/join/inv_…`), on any device and without an account: it trades the
 * one-use invitation for a temporary token of its own (`POST /v1/invitations/redeem`) and joins.
 * The invitation is in the URL's fragment, which browsers never send to a server. The guest's user
 * id (`guest_…`) and stream ids are the platform's, given in the token.
 */
export function JoinPage({ invitation }: { invitation: string }) {
  const [user, setUser] = useState('');
  const call = useCall();
  const devices = useDevices(true);
  const action = useAction();
  const [used, setUsed] = useState(false);
  return (
    <section aria-labelledby="join-title">
      <h1 id="join-title">Join a test room</h1>
      <p class="lead">You were invited to a test call. Choose your camera and microphone, then join: you take part as a
        guest, under a user id starting with <code>guest_</code> that the platform gives you.</p>
      <DevicePicker devices={devices} disabled={call.session !== undefined} />
      <ErrorText error={devices.error} />
      {!call.session && !used && (
        <form class="inline" onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const media = devices.media;
            if (!media) throw new Error('The camera and microphone are not available yet: allow them in the browser and try again.');
            const token = await publicPost<TokenResponse>('/v1/invitations/redeem', { invitation });
            // the invitation works once: this page does not renew its ten-minute token
            setUsed(true);
            setUser(token.user_id);
            await call.join(token, media);
          });
        }}>
          <button type="submit" disabled={action.busy}>Join</button>
        </form>
      )}
      <ErrorText error={action.error} />
      <CallView call={call} media={devices.media} user={user || 'guest'} leaveLabel="Leave" />
      {call.session && call.people.length === 0 && <EmptyState title="Nobody else is here yet"><p>The person who shared the link joins from their console.</p></EmptyState>}
      {used && !call.session && <p>This link has been used: ask for a new one to join again.</p>}
    </section>
  );
}
