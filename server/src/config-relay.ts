/**
 * The relay links between media nodes (docs/operations/configuration.md, "Relay between media
 * nodes"), read by `loadConfig` from the environment it was given.
 */
import type { KnownEnv, ReadInt } from './config.ts';

export interface RelayOptions {
  /** UDP port of the node's relay datagrams (`RTC_MEDIA_RELAY_PORT`); 0: one the system picks. */
  readonly port: number;
  /**
   * The node credential set by the operator (`RTC_MEDIA_RELAY_SECRET`); undefined: derived from the
   * key ring every node shares (docs/protocol/relay.md, "Node credential"). Secret: never logged.
   */
  readonly secret: Buffer | undefined;
}

export const MIN_RELAY_SECRET_LENGTH = 32;
const MAX_RELAY_SECRET_LENGTH = 1024;

/** `RTC_MEDIA_RELAY_PORT` and `RTC_MEDIA_RELAY_SECRET`, checked against the media workers that take consecutive ports. */
export function relayOptions(env: KnownEnv, int: ReadInt, problems: string[], workers: number): RelayOptions {
  const port = int('RTC_MEDIA_RELAY_PORT', 0, 0, 65535);
  if (port !== 0 && workers > 1 && port + workers - 1 > 65535) {
    problems.push(`RTC_MEDIA_RELAY_PORT: ${workers} workers need UDP ports ${port} to ${port + workers - 1}`);
  }
  const raw = env['RTC_MEDIA_RELAY_SECRET'] || undefined;
  let secret: Buffer | undefined;
  if (raw !== undefined) {
    // the value is never quoted: only what is wrong with it
    if (raw.length < MIN_RELAY_SECRET_LENGTH || raw.length > MAX_RELAY_SECRET_LENGTH) {
      problems.push(`RTC_MEDIA_RELAY_SECRET must be ${MIN_RELAY_SECRET_LENGTH} to ${MAX_RELAY_SECRET_LENGTH} characters (for example \`openssl rand -base64 32\`)`);
    } else if (/\s/.test(raw)) {
      problems.push('RTC_MEDIA_RELAY_SECRET must not contain spaces or line breaks');
    } else {
      secret = Buffer.from(raw, 'utf8');
    }
  }
  return { port, secret };
}
