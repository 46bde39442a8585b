/**
 * The media role in this process beside the in-process api and token apps (inproc.ts), on their
 * store and clock, and app SDK sessions that join it with tokens those apps issue.
 */
import assert from 'node:assert/strict';
import type { TokenResponse } from '@rtc/protocol';
import pino from 'pino';
import { loadConfig } from '../../server/src/config.ts';
import type { ServiceDeps } from '../../server/src/core/deps.ts';
import { startMediaRole } from '../../server/src/media/node/role.ts';
import type { RoleServer } from '../../server/src/role.ts';
import type { Store } from '../../server/src/store/port.ts';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import type { Customer } from './customer.ts';
import type { InProcessPlatform } from './inproc.ts';
import { join } from './media-session.ts';

export interface InProcessMedia {
  readonly role: RoleServer;
  /** A token of `customer` for this media role: its `media` names the role's loopback address. */
  issue(body: Readonly<Record<string, unknown>>): Promise<TokenResponse>;
  /** Issues a speaker token publishing stream 1 for `user` in `room` and joins this media role with it. */
  enter(room: string, user: string): Promise<MediaSession>;
  /** Joins this media role with a token issued otherwise (a console temporary token, an invitation's). */
  join(token: TokenResponse): Promise<MediaSession>;
  /** Closes every session entered, then the role. */
  close(): Promise<void>;
}

/** Starts the media role on `deps` (the in-process platform's by default) with `env` on top of its defaults, entering as `customer`. */
export async function startInProcessMedia(
  server: InProcessPlatform, customer: Customer, deps: ServiceDeps<Store> = server.deps, env: Readonly<Record<string, string>> = {},
): Promise<InProcessMedia> {
  const config = loadConfig({ RTC_ROLES: 'media', RTC_DATA_DIR: server.dataDir, RTC_MEDIA_PORT: '0', ...env });
  const role = await startMediaRole({ config, deps, logger: pino({ level: 'silent' }) });
  const sessions: MediaSession[] = [];
  const issue = async (body: Readonly<Record<string, unknown>>): Promise<TokenResponse> => {
    const res = await server.request(`${server.api}/v1/rtc/tokens`, { headers: { authorization: customer.auth }, body });
    assert.equal(res.status, 200, res.text);
    const token = res.json<TokenResponse>();
    return { ...token, media: { ...token.media, sfu_host: '127.0.0.1', sfu_port: Number(new URL(role.url).port) } };
  };
  const joinRole = async (token: TokenResponse): Promise<MediaSession> => {
    const port = Number(new URL(role.url).port);
    const session = await join({ ...token, media: { ...token.media, sfu_host: '127.0.0.1', sfu_port: port } });
    sessions.push(session);
    return session;
  };
  return {
    role,
    issue,
    async enter(room, user) {
      return joinRole(await issue({ room_id: room, user_id: user, role: 'speaker', publish_streams: [1] }));
    },
    join: joinRole,
    async close() {
      for (const s of sessions) await s.close();
      await role.close();
    },
  };
}
