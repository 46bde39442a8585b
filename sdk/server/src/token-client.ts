import { MAX_BAN_SECONDS, MAX_STREAM_ID, type ParticipantRemoved, type RevocationRequest, type TokenRequest, type TokenResponse } from '@rtc/protocol';
import { ApiCaller, type CallOptions } from './api-call.ts';
import { resolveClientOptions, type TokenClientOptions } from './client-options.ts';
import { isObject, isParticipant, isRoom, type RtcParticipant, type RtcRoom } from './rooms.ts';
import type { DataMessageRequest, DataMessageSent, ParticipantUpdate, RoomCreateRequest, RoomList, RoomUpdate } from '@rtc/protocol';
import { assertServerRuntime } from './runtime.ts';

/**
 * Client of the token API for the customer's server: trades the App ID and App Secret for
 * short-lived media credentials (`issue`) and cuts a user off early (`revoke`).
 *
 * - Refuses to be constructed in a browser (`TypeError`): the App Secret must never reach a client.
 * - Errors are typed: {@link TokenApiError} (a catalogue code from the platform),
 *   {@link TokenNetworkError} (no answer), {@link TokenResponseError} (an answer off the contract);
 *   misuse of the SDK itself is a `TypeError`.
 * - Retries 502/503/504 and network failures with exponential backoff and full jitter, and waits
 *   for a short `Retry-After` on 429; see {@link RetryOptions}.
 * - `JSON.stringify(client)` and `util.inspect(client)` show the base URL and the App ID only.
 *
 * @example
 * ```ts
 * import { TokenClient } from '@rtc/server-sdk';
 *
 * const tokens = new TokenClient({ baseUrl: 'https://token.rtc.example.com', appId, appSecret });
 * const t = await tokens.issue({ room_id: 'r_81', user_id: 'u_7', role: 'speaker', publish_streams: [1] });
 * // hand t.media (grant, key, sfu_host, sfu_port) to the app over HTTPS; keep t.media.revocation_handle
 * await tokens.revoke(t.media.revocation_handle);
 * ```
 */
export class TokenClient {
  readonly #baseUrl: string;
  readonly #appId: string;
  readonly #api: ApiCaller;

  constructor(options: TokenClientOptions) {
    assertServerRuntime();
    const settings = resolveClientOptions(options);
    this.#baseUrl = settings.baseUrl;
    this.#appId = settings.appId;
    this.#api = new ApiCaller(settings);
  }

  /** Token API host this client talks to. */
  get baseUrl(): string {
    return this.#baseUrl;
  }

  /** App ID of the credential (not a secret). */
  get appId(): string {
    return this.#appId;
  }

  /**
   * Issues media credentials for one user in one room (`POST /v1/rtc/tokens`). The platform
   * validates the request; its answers arrive as {@link TokenApiError} (`invalid_request`,
   * `scope_denied`, `turn_unavailable`, ...).
   *
   * Issue one token per user and room and let the app SDK renew it; do not issue in a loop.
   * An attempt that timed out may have issued a token that is never delivered: it expires unused.
   *
   * @example
   * ```ts
   * const t = await tokens.issue({ room_id: 'r_81', user_id: 'u_7', role: 'audience', subscribe_room: true, ttl_seconds: 900 });
   * console.log(t.expires_at, t.media.sfu_host);
   * ```
   */
  async issue(request: TokenRequest, options: CallOptions = {}): Promise<TokenResponse> {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      throw new TypeError('issue() needs a token request object');
    }
    return this.#api.call('issue', 'POST', '/v1/rtc/tokens', JSON.stringify(request), readTokenResponse, options);
  }

  /**
   * Revokes the token behind a revocation handle (`POST /v1/rtc/tokens/revoke`): the media
   * server cuts that user's session within about a second, and the grant is refused from then on.
   * Idempotent, so it is retried like `issue`. A handle of another project, or an altered one,
   * is a {@link TokenApiError} with code `unknown_handle`. Stop issuing new tokens to the user too.
   *
   * @example
   * ```ts
   * await tokens.revoke(t.media.revocation_handle);
   * ```
   */
  async revoke(handle: string, options: CallOptions = {}): Promise<void> {
    if (typeof handle !== 'string' || handle.length === 0) {
      throw new TypeError('revoke() needs the revocation_handle string of a token response');
    }
    const body: RevocationRequest = { revocation_handle: handle };
    await this.#api.call('revoke', 'POST', '/v1/rtc/tokens/revoke', JSON.stringify(body), () => true, options);
  }

  /**
   * One page of the live rooms of the credential's project, by room id (`GET /v1/rtc/rooms`,
   * docs/reference/room-api.md): rooms with a participant joined on a media node, and rooms created
   * or configured through the API whose `empty_timeout` has not run out. Pass `next_cursor` as
   * `cursor` for the next page (null on the last); `roomIds` keeps only the rooms named.
   *
   * @example
   * ```ts
   * let cursor: string | undefined;
   * do {
   *   const page = await tokens.listRooms({ limit: 50, cursor });
   *   for (const room of page.rooms) console.log(room.room_id, room.participants.length);
   *   cursor = page.next_cursor ?? undefined;
   * } while (cursor);
   * ```
   */
  async listRooms(options: ListRoomsOptions = {}): Promise<RoomList> {
    const { limit, cursor, roomIds } = options;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) throw new TypeError('limit must be an integer from 1 to 100');
    const query = new URLSearchParams();
    if (limit !== undefined) query.set('limit', String(limit));
    if (cursor !== undefined) query.set('cursor', cursor);
    if (roomIds !== undefined) {
      if (roomIds.length === 0 || roomIds.some((id) => typeof id !== 'string' || id.length === 0 || id.includes(','))) {
        throw new TypeError('roomIds must be a non-empty list of room ids without commas');
      }
      query.set('room_ids', roomIds.join(','));
    }
    const read = (json: unknown): RoomList | undefined =>
      (isObject(json) && Array.isArray(json['rooms']) && json['rooms'].every(isRoom)
        && (json['next_cursor'] === null || typeof json['next_cursor'] === 'string')
        ? { rooms: json['rooms'], next_cursor: json['next_cursor'] } : undefined);
    const search = query.toString();
    return this.#api.call('listRooms', 'GET', `/v1/rtc/rooms${search ? `?${search}` : ''}`, undefined, read, callOptions(options));
  }

  /**
   * Creates a room ahead of time with its metadata and settings (`POST /v1/rtc/rooms`); idempotent
   * on the room id: a room whose settings are stored already resolves with them, unchanged.
   *
   * @example
   * ```ts
   * await tokens.createRoom({ room_id: 'standup', max_participants: 10, empty_timeout: 600, metadata: '{"title":"Standup"}' });
   * ```
   */
  async createRoom(request: RoomCreateRequest, options: CallOptions = {}): Promise<RtcRoom> {
    if (typeof request !== 'object' || request === null || typeof request.room_id !== 'string') {
      throw new TypeError('createRoom() needs an object with a room_id');
    }
    return this.#api.call('createRoom', 'POST', '/v1/rtc/rooms', JSON.stringify(request), (json) => (isRoom(json) ? json : undefined), options);
  }

  /**
   * Changes a live room's metadata, `max_participants` or `empty_timeout` (`PATCH /v1/rtc/rooms/{room_id}`);
   * every participant's app receives the new metadata. `not_found` when the room is not live.
   */
  async updateRoom(roomId: string, update: RoomUpdate, options: CallOptions = {}): Promise<RtcRoom> {
    if (typeof update !== 'object' || update === null || Array.isArray(update)) throw new TypeError('updateRoom() needs an update object');
    return this.#api.call('updateRoom', 'PATCH', `/v1/rtc/rooms/${pathId('roomId', roomId)}`, JSON.stringify(update),
      (json) => (isRoom(json) ? json : undefined), options);
  }

  /** Sets a live room's metadata: {@link TokenClient.updateRoom} with `metadata` alone. */
  async updateRoomMetadata(roomId: string, metadata: string, options: CallOptions = {}): Promise<RtcRoom> {
    if (typeof metadata !== 'string') throw new TypeError('updateRoomMetadata() needs a metadata string');
    return this.updateRoom(roomId, { metadata }, options);
  }

  /**
   * Sends a data message to a room's participants (`POST /v1/rtc/rooms/{room_id}/data`): every
   * participant's app receives it as a `serverData` event, or only those named by
   * `destinationParticipantIds` / `destinationUserIds`. `data` is bytes or text (sent as UTF-8), at
   * most 16384 bytes. Resolves with how many live participants it was addressed to.
   *
   * @example
   * ```ts
   * await tokens.sendData('r_81', JSON.stringify({ poll: 'lunch?' }), { topic: 'poll' });
   * ```
   */
  async sendData(roomId: string, data: Uint8Array | string, options: SendDataOptions = {}): Promise<DataMessageSent> {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    if (!(bytes instanceof Uint8Array)) throw new TypeError('sendData() needs a Uint8Array or a string');
    const body: DataMessageRequest = {
      data: toBase64(bytes),
      ...(options.topic !== undefined && { topic: options.topic }),
      ...(options.destinationParticipantIds !== undefined && { destination_participant_ids: options.destinationParticipantIds }),
      ...(options.destinationUserIds !== undefined && { destination_user_ids: options.destinationUserIds }),
    };
    const read = (json: unknown): DataMessageSent | undefined =>
      (isObject(json) && json['sent'] === true && typeof json['recipients'] === 'number' ? { sent: true, recipients: json['recipients'] } : undefined);
    return this.#api.call('sendData', 'POST', `/v1/rtc/rooms/${pathId('roomId', roomId)}/data`, JSON.stringify(body), read, callOptions(options));
  }

  /**
   * One live room and its participants (`GET /v1/rtc/rooms/{room_id}`); a room without a
   * participant is a {@link TokenApiError} with code `not_found`.
   */
  async getRoom(roomId: string, options: CallOptions = {}): Promise<RtcRoom> {
    return this.#api.call('getRoom', 'GET', `/v1/rtc/rooms/${pathId('roomId', roomId)}`, undefined,
      (json) => (isRoom(json) ? json : undefined), options);
  }

  /**
   * Removes a participant (`POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/remove`):
   * every session of its user in the room closes within about a second (close code 4003), and the
   * user's tokens for the room issued up to the removal are refused, also one just renewed. With
   * `banSeconds` (1 to 604800), tokens issued until the ban ends are refused too. Resolves with what
   * the platform stored (`cut_off_at`, and `banned_until` during a ban). `not_found` when it is not
   * live; `unavailable` (retried) when the cut-off could not be stored.
   *
   * @example
   * ```ts
   * const room = await tokens.getRoom('r_81');
   * const troll = room.participants.find((p) => p.user_id === 'u_13');
   * if (troll) await tokens.removeParticipant('r_81', troll.participant_id, { banSeconds: 3600 });
   * ```
   */
  async removeParticipant(roomId: string, participantId: string, options: RemoveOptions = {}): Promise<ParticipantRemoved> {
    const { banSeconds } = options;
    if (banSeconds !== undefined && !(Number.isInteger(banSeconds) && banSeconds >= 1 && banSeconds <= MAX_BAN_SECONDS)) {
      throw new TypeError(`banSeconds must be an integer from 1 to ${MAX_BAN_SECONDS}`);
    }
    const read = (json: unknown): ParticipantRemoved | undefined =>
      (isObject(json) && json['removed'] === true && typeof json['user_id'] === 'string' && typeof json['cut_off_at'] === 'number'
        && (json['banned_until'] === undefined || typeof json['banned_until'] === 'number') ? json as unknown as ParticipantRemoved : undefined);
    return this.#api.call('removeParticipant', 'POST',
      `/v1/rtc/rooms/${pathId('roomId', roomId)}/participants/${pathId('participantId', participantId)}/remove`,
      banSeconds === undefined ? undefined : JSON.stringify({ ban_seconds: banSeconds }), read, callOptions(options));
  }

  /**
   * Ends a room (`POST /v1/rtc/rooms/{room_id}/end`): every session of the room closes like
   * {@link TokenClient.removeParticipant}, and every token for the room issued up to now is
   * refused. Resolves with how many participants were closed and the cut-off stored.
   */
  async endRoom(roomId: string, options: CallOptions = {}): Promise<{ participants: number; cut_off_at: number }> {
    const read = (json: unknown): { participants: number; cut_off_at: number } | undefined =>
      (isObject(json) && typeof json['participants'] === 'number' && typeof json['cut_off_at'] === 'number'
        ? { participants: json['participants'], cut_off_at: json['cut_off_at'] } : undefined);
    return this.#api.call('endRoom', 'POST', `/v1/rtc/rooms/${pathId('roomId', roomId)}/end`, undefined, read, options);
  }

  /**
   * Changes what a live participant may publish and receive, at once and without a reconnection,
   * and its metadata and attributes (`PATCH /v1/rtc/rooms/{room_id}/participants/{participant_id}`).
   * Granting needs the credential's scopes (`scope_denied`); the audience role never publishes
   * (`invalid_request`). `metadata` replaces the participant's; `attributes` merge into its
   * attributes, a key set to '' or null being deleted; every app in the room is told.
   *
   * @example
   * ```ts
   * await tokens.updateParticipant('r_81', p.participant_id, { publish_streams: [] }); // stop publishing
   * await tokens.updateParticipant('r_81', p.participant_id, { attributes: { hand: 'raised' } });
   * ```
   */
  async updateParticipant(
    roomId: string, participantId: string, permissions: ParticipantUpdate, options: CallOptions = {},
  ): Promise<RtcParticipant> {
    if (typeof permissions !== 'object' || permissions === null || Array.isArray(permissions)) {
      throw new TypeError('updateParticipant() needs an object of permissions, metadata or attributes');
    }
    return this.#api.call('updateParticipant', 'PATCH',
      `/v1/rtc/rooms/${pathId('roomId', roomId)}/participants/${pathId('participantId', participantId)}`,
      JSON.stringify(permissions), (json) => (isParticipant(json) ? json : undefined), options);
  }

  /**
   * Mutes or unmutes one stream a live participant publishes
   * (`POST /v1/rtc/rooms/{room_id}/participants/{participant_id}/streams/{stream_id}/mute`): its
   * media node stops forwarding the stream's media at once, or forwards it again, and the room's
   * participants receive `stream_muted`. Resolves with the participant, its `streams[].muted` set.
   * Needs the publisher scope (`scope_denied`); `not_found` when the participant is not live or does
   * not publish the stream.
   *
   * @example
   * ```ts
   * const room = await tokens.getRoom('r_81');
   * for (const p of room.participants) {
   *   for (const s of p.streams) if (s.source === 'microphone') await tokens.muteStream('r_81', p.participant_id, s.stream_id, true);
   * }
   * ```
   */
  async muteStream(roomId: string, participantId: string, streamId: number, muted: boolean, options: CallOptions = {}): Promise<RtcParticipant> {
    if (!Number.isInteger(streamId) || streamId < 1 || streamId > MAX_STREAM_ID) {
      throw new TypeError(`streamId must be an integer from 1 to ${MAX_STREAM_ID}`);
    }
    if (typeof muted !== 'boolean') throw new TypeError('muted must be true or false');
    return this.#api.call('muteStream', 'POST',
      `/v1/rtc/rooms/${pathId('roomId', roomId)}/participants/${pathId('participantId', participantId)}/streams/${streamId}/mute`,
      JSON.stringify({ muted }), (json) => (isParticipant(json) ? json : undefined), options);
  }

  /** The client as JSON: base URL and App ID only. */
  toJSON(): { baseUrl: string; appId: string } {
    return { baseUrl: this.#baseUrl, appId: this.#appId };
  }

  /** What `util.inspect` and `console.log` show: base URL and App ID only. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TokenClient { baseUrl: ${JSON.stringify(this.#baseUrl)}, appId: ${JSON.stringify(this.#appId)} }`;
  }
}

/** Options of {@link TokenClient.listRooms}. */
export interface ListRoomsOptions extends CallOptions {
  /** Page size, 1 to 100 (default 20). */
  readonly limit?: number | undefined;
  /** `next_cursor` of the previous page, with the same `roomIds`. */
  readonly cursor?: string | undefined;
  /** Only these rooms. */
  readonly roomIds?: readonly string[] | undefined;
}

/** Options of {@link TokenClient.sendData}. */
export interface SendDataOptions extends CallOptions {
  readonly topic?: string | undefined;
  /** Only these participants (`pa_…`); with `destinationUserIds`, those of either list. */
  readonly destinationParticipantIds?: readonly string[] | undefined;
  /** Only the participants of these users. */
  readonly destinationUserIds?: readonly string[] | undefined;
}

/** Standard base64 of bytes, in every runtime the SDK supports. */
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Options of {@link TokenClient.removeParticipant}. */
export interface RemoveOptions extends CallOptions {
  /** Keep the user out of the room this many seconds (1 to 604800): its tokens for the room issued until then are refused. */
  readonly banSeconds?: number;
}

/** The call options alone, without what an operation reads itself. */
function callOptions(options: CallOptions): CallOptions {
  return options.signal === undefined ? {} : { signal: options.signal };
}

/** A room or participant id as a path segment. */
function pathId(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(value);
}

/** Accepts a body with the fields an app needs to join; the rest is the platform's promise. */
function readTokenResponse(json: unknown): TokenResponse | undefined {
  if (!isObject(json) || !isObject(json['media'])) return undefined;
  const media = json['media'];
  const ok = typeof json['expires_at'] === 'number'
    && typeof media['grant'] === 'string' && typeof media['key'] === 'string'
    && typeof media['sfu_host'] === 'string' && typeof media['sfu_port'] === 'number'
    && typeof media['revocation_handle'] === 'string';
  return ok ? (json as unknown as TokenResponse) : undefined;
}
