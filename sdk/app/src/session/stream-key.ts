import { KEY_BYTES } from '@rtc/protocol';
import { importAesKey, type SecretKey } from '../crypto.ts';
import { fromB64u } from '../encoding.ts';
import { MediaError } from '../errors.ts';

/** A stream key as the server hands it over (`published`, `stream_key`, the streams of `joined`). */
export async function importStreamKey(value: string): Promise<SecretKey> {
  const raw = fromB64u(value);
  if (!raw || raw.length !== KEY_BYTES) throw new MediaError('protocol_error', 'the server sent an invalid stream key');
  return importAesKey(raw);
}
