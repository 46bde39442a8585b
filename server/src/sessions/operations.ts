import type { Operation } from '../http/registry.ts';
import { consoleOperation, projectId } from '../http/console-operation.ts';
import { sessionListSchema } from './responses.ts';
import { sessionsQuerySchema } from './schemas.ts';
import { SESSION_RETENTION_DAYS } from './store.ts';

/** The console's session history (docs/console.md, "Session history"), on its session. */
export const SESSION_CONSOLE_API = {
  listProjectSessions: consoleOperation({
    id: 'listProjectSessions', method: 'GET', path: '/v1/projects/{id}/sessions', tag: 'Projects',
    summary: 'The project\'s media sessions, newest first, open and ended',
    description: 'Every session a media node admitted, from its join to its leave, with why it ended (as participant.left '
      + `says) and its duration. Kept ${SESSION_RETENTION_DAYS} days after the session ended. A session whose media node `
      + 'stopped without closing it ends at the node\'s last heartbeat, reason node_lost.',
    pathParams: projectId, query: sessionsQuerySchema,
    responses: { 200: { description: 'one page; next_cursor is null on the last', schema: sessionListSchema } },
    errors: ['rate_limited'],
  }),
} satisfies Record<string, Operation>;
