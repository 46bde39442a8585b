import assert from 'node:assert/strict';
import type { HttpResult } from './http.ts';

/** An error answer of the platform: this status, a body of exactly `error` and `message`, this code (and message). */
export function assertError(res: HttpResult, status: number, code: string, message?: RegExp): void {
  assert.equal(res.status, status, res.text);
  const body = res.json<{ error: string; message: string }>();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], res.text);
  assert.equal(body.error, code);
  if (message) assert.match(body.message, message);
}
