import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  Account, Credential, CredentialList, CredentialWithSecret, ParticipantRemoved, Project, ProjectList, ProjectUsage, RevocationResult,
  RoomEnded, RoomList, SessionTokens, MediaSessionList,
} from '@rtc/protocol';
import type { z } from 'zod';
import type {
  accountSchema, credentialListSchema, credentialSchema, credentialWithSecretSchema, projectListSchema, projectSchema, sessionTokensSchema,
} from '../../server/src/customers/responses.ts';
import type { participantRemovedSchema, roomEndedSchema, roomListSchema } from '../../server/src/rooms/responses.ts';
import type { revocationResultSchema } from '../../server/src/tokens/responses.ts';
import type { projectUsageSchema } from '../../server/src/billing/schemas.ts';
import type { sessionListSchema } from '../../server/src/sessions/responses.ts';

/**
 * What a response schema produces fits the view clients read (protocol/src/customer-views.ts), and
 * both name the same fields: a field added, renamed or retyped on one side fails the type check.
 */
type Matches<S extends z.ZodType, View> = [z.infer<S>] extends [View]
  ? [keyof View] extends [keyof z.infer<S>] ? [keyof z.infer<S>] extends [keyof View] ? true : false : false
  : false;

/** Compiles only when `T` is `true`. */
const holds = <T extends true>(): T => true as T;

const CHECKS = {
  Account: holds<Matches<typeof accountSchema, Account>>(),
  SessionTokens: holds<Matches<typeof sessionTokensSchema, SessionTokens>>(),
  Project: holds<Matches<typeof projectSchema, Project>>(),
  ProjectList: holds<Matches<typeof projectListSchema, ProjectList>>(),
  Credential: holds<Matches<typeof credentialSchema, Credential>>(),
  CredentialWithSecret: holds<Matches<typeof credentialWithSecretSchema, CredentialWithSecret>>(),
  CredentialList: holds<Matches<typeof credentialListSchema, CredentialList>>(),
  ProjectUsage: holds<Matches<typeof projectUsageSchema, ProjectUsage>>(),
  RoomList: holds<Matches<typeof roomListSchema, RoomList>>(),
  RoomEnded: holds<Matches<typeof roomEndedSchema, RoomEnded>>(),
  ParticipantRemoved: holds<Matches<typeof participantRemovedSchema, ParticipantRemoved>>(),
  RevocationResult: holds<Matches<typeof revocationResultSchema, RevocationResult>>(),
  MediaSessionList: holds<Matches<typeof sessionListSchema, MediaSessionList>>(),
};

describe('customer API views', () => {
  it('match the response schemas', () => {
    assert.ok(Object.values(CHECKS).every((ok) => ok));
  });
});
