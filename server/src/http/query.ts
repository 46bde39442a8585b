import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../core/cursor.ts';
import { ApiError } from '../core/errors.ts';

/** The query string rules every route shares: strict objects, one value a parameter, paging. */

function shortName(name: PropertyKey): string {
  const text = String(name);
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

/**
 * Validates a parsed query string (`req.query`): an unknown parameter, a repeated one, or a bad value
 * is `400 invalid_request` naming the rule, like a body field.
 */
export function validateQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const result = schema.safeParse({ ...(query as Record<string, unknown> | undefined) });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new ApiError('invalid_request', 'invalid query string');
  if (issue.code === 'unrecognized_keys') {
    throw new ApiError('invalid_request', `unknown query parameter ${shortName(issue.keys[0] ?? '')} is not allowed`);
  }
  const field = String(issue.path[0] ?? '');
  throw new ApiError('invalid_request', issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`);
}

/** One string-valued query parameter; a repeated parameter arrives as an array and is refused. */
export const queryText = (field: string, rule: string) => z.string({
  error: (issue) => (Array.isArray(issue.input) ? `${field} must be given once` : `${field} must be ${rule}`),
});

/** `limit`: an integer from 1 to 100 written in decimal digits. */
export const limitParam = z.preprocess(
  (value) => (typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value),
  z.number({ error: (issue) => (Array.isArray(issue.input) ? 'limit must be given once' : `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`) })
    .int({ error: `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}` })
    .min(1, { error: `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}` })
    .max(MAX_PAGE_LIMIT, { error: `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}` }),
).meta({ description: `page size, 1 to ${MAX_PAGE_LIMIT}; default ${DEFAULT_PAGE_LIMIT}` });

export const cursorParam = queryText('cursor', 'the next_cursor of the previous page').min(1, { error: 'cursor must not be empty' })
  .max(512, { error: 'cursor is not valid for this listing' })
  .meta({ description: 'next_cursor of the previous page; the other parameters must stay the same' });

/** Endpoints without parameters still refuse any query parameter. */
export const noQuerySchema = z.strictObject({});
