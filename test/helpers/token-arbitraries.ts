/**
 * Token request bodies for the property tests of the token API (docs/reference/token-api.md,
 * "Request rules"): bodies that satisfy every rule, and the mutations that break them.
 */
import fc from 'fast-check';

export const TOKEN_ROLES = ['host', 'cohost', 'speaker', 'participant', 'audience'] as const;
export const TOKEN_FIELDS = ['room_id', 'user_id', 'role', 'publish_streams', 'subscribe_streams', 'subscribe_room', 'ttl_seconds', 'turn', 'signaling'];

/** An opaque id: 1 to 128 printable ASCII characters. */
export const opaqueId = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 128 });
/** Distinct stream ids, at most `max`. */
export const streamIds = (max: number) => fc.uniqueArray(fc.integer({ min: 1, max: 4294967295 }), { maxLength: max });

/**
 * Bodies that satisfy every rule (scopes aside): `userId` narrows the user ids, `services` adds
 * `turn` and `signaling`.
 */
export function validTokenBody(options: { userId?: fc.Arbitrary<string>; services?: boolean } = {}): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({
    room_id: opaqueId, user_id: options.userId ?? opaqueId, role: fc.constantFrom(...TOKEN_ROLES),
    publish_streams: streamIds(8), subscribe_streams: streamIds(32), subscribe_room: fc.boolean(),
    ttl_seconds: fc.integer({ min: 1, max: 3600 }), ...(options.services ? { turn: fc.boolean(), signaling: fc.boolean() } : {}),
  }, { requiredKeys: ['room_id', 'user_id', 'role'] }).map((b) => {
    const body: Record<string, unknown> = { ...b };
    if (b.role === 'audience') delete body['publish_streams'];
    if (b.subscribe_room === true) delete body['subscribe_streams'];
    return body;
  });
}

export type BodyMutation = (body: Record<string, unknown>) => Record<string, unknown>;

/** A field of the token request left out. */
export const dropField: fc.Arbitrary<BodyMutation> = fc.constantFrom(...TOKEN_FIELDS)
  .map((field): BodyMutation => (b) => Object.fromEntries(Object.entries(b).filter(([k]) => k !== field)));

/** A field of the token request set to `value`. */
export const setField = (value: fc.Arbitrary<unknown>): fc.Arbitrary<BodyMutation> =>
  fc.tuple(fc.constantFrom(...TOKEN_FIELDS), value).map(([field, v]): BodyMutation => (b) => ({ ...b, [field]: v }));

/** A field named `name` (`__proto__` included, as an own property) set to `value`. */
export const defineField = (name: fc.Arbitrary<string>, value: fc.Arbitrary<unknown>): fc.Arbitrary<BodyMutation> =>
  fc.tuple(name, value).map(([field, v]): BodyMutation => (b) => {
    const copy = { ...b };
    Object.defineProperty(copy, field, { value: v, enumerable: true, writable: true, configurable: true });
    return copy;
  });

/** `publish_streams` or `subscribe_streams` set to up to 40 `element`s. */
export const setStreams = (element: fc.Arbitrary<unknown>): fc.Arbitrary<BodyMutation> =>
  fc.tuple(fc.constantFrom('publish_streams', 'subscribe_streams'), fc.array(element, { maxLength: 40 }))
    .map(([field, value]): BodyMutation => (b) => ({ ...b, [field]: value }));
