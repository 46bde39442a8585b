/** The media role with the api and token roles served in this process, and a fixture of one describe block around them. */
import { after, before } from 'node:test';
import type { TokenResponse } from '@rtc/protocol';
import type { MediaSession } from '../../sdk/app/src/index.ts';
import { TokenIssuer } from './media-session.ts';
import { serveInProcess, type ServedPlatform, type ServeOptions } from './serve-inproc.ts';

export const MEDIA_ROLES = ['api', 'token', 'media'] as const;

/** Generous rate limits: media tests issue many tokens. */
export const MEDIA_TEST_ENV: Readonly<Record<string, string>> = {
  RTC_APP_RATE_LIMIT_PER_MINUTE: '100000', RTC_ADDRESS_RATE_LIMIT_PER_MINUTE: '100000', RTC_LOG_LEVEL: 'info',
};

/** The api, token and media roles in this process, on real loopback sockets. */
export function serveMedia(options: Omit<ServeOptions, 'roles'> = {}): Promise<ServedPlatform> {
  return serveInProcess({ ...options, roles: MEDIA_ROLES, env: { ...MEDIA_TEST_ENV, ...options.env } });
}

/** A media platform and a customer for the tests of one describe block, which it starts before them and stops after. */
export interface MediaFixture {
  readonly server: ServedPlatform;
  readonly issuer: TokenIssuer;
  /** Closed after the block, before the server stops. */
  readonly sessions: MediaSession[];
  /** Run after the sessions are closed (proxies, ...). */
  readonly closers: (() => Promise<void>)[];
  /** A speaker's token with `subscribe_room`, in the block's room unless another is named. */
  token(user: string, body?: Record<string, unknown>, room?: string): Promise<TokenResponse>;
  /** Stops the server (waiting for `stopped` before the next start) and starts another on the same data. */
  restart(stopped?: () => Promise<void>): Promise<void>;
}

/** Registers the block's `before` and `after` hooks; call it inside `describe`. */
export function useMediaPlatform(room: string, options: Omit<ServeOptions, 'roles' | 'dataDir'> = {}): MediaFixture {
  let server: ServedPlatform | undefined;
  let issuer: TokenIssuer | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the media platform starts in the block\'s before hook');
    return value;
  };
  const fixture: MediaFixture = {
    get server() { return started(server); },
    get issuer() { return started(issuer); },
    sessions: [],
    closers: [],
    token: (user, body = {}, inRoom = room) => fixture.issuer.issue({ room_id: inRoom, user_id: user, role: 'speaker', subscribe_room: true, ...body }),
    async restart(stopped) {
      const { dataDir } = fixture.server;
      await fixture.server.stop();
      await stopped?.();
      server = await serveMedia({ ...options, dataDir });
    },
  };
  before(async () => {
    server = await serveMedia(options);
    issuer = await TokenIssuer.create(() => fixture.server.api);
  });
  after(async () => {
    for (const s of fixture.sessions) await s.close();
    for (const close of fixture.closers) await close();
    await server?.stop();
  });
  return fixture;
}
