/** `rtc serve` with the media role as a child process, for the tests that need one beside a browser or a CLI. */
import { MEDIA_ROLES, MEDIA_TEST_ENV } from '../helpers/media-platform.ts';
import { startServer, type RunningServer, type StartOptions } from '../helpers/platform.ts';

/** `rtc serve` with the api, token and media roles (generous rate limits: tests issue many tokens). */
export function startMediaServer(options: Omit<StartOptions, 'roles'> = {}): Promise<RunningServer> {
  return startServer({ ...options, roles: MEDIA_ROLES, env: { ...MEDIA_TEST_ENV, ...options.env } });
}
