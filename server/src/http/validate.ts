import type { z } from 'zod';
import { ApiError } from '../core/errors.ts';

/** Field names in messages are shown JSON-quoted and cut short, so input is never echoed at length. */
function fieldName(name: PropertyKey): string {
  const text = String(name);
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

function describe(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const where = path ? ` in ${path}` : '';
    return `unknown field ${fieldName(issue.keys[0] ?? '')}${where} is not allowed`;
  }
  const field = String(issue.path[0] ?? '');
  return field && !issue.message.startsWith(field) ? `${path}: ${issue.message}` : issue.message;
}

/**
 * Validates `body` against `schema`; the first violated rule becomes `400 invalid_request` whose
 * message names that rule.
 */
export function validate<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_request', 'the request body must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new ApiError('invalid_request', issue ? describe(issue) : 'invalid request');
}

/** Parses a JSON request body given as bytes; syntax errors are `400 invalid_request`. */
export function parseJsonBody(raw: Buffer | string | undefined): unknown {
  if (raw === undefined || raw.length === 0) {
    throw new ApiError('invalid_request', 'the request body must be a JSON object');
  }
  try {
    return JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    throw new ApiError('invalid_request', 'the request body is not valid JSON');
  }
}

/** A required field's type error says "is required" when the field is absent. */
export function typeError(field: string, expected: string): { error: (issue: { input?: unknown }) => string } {
  return {
    error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be ${expected}`),
  };
}
