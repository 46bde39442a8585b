import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { DEFAULT_LISTENER_LIMITS } from '../config.ts';
import { REDACT_PATHS } from '../log.ts';
import { createEdge } from './edge.ts';

describe('request loggers of the edge', () => {
  const lines: Record<string, unknown>[] = [];
  let children = 0;
  let app: FastifyInstance;

  before(async () => {
    const logger = pino({
      level: 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      onChild: () => { children += 1; },
    }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } });
    app = createEdge({
      role: 'token', logger, listener: DEFAULT_LISTENER_LIMITS.token, bodyLimit: 8192,
      refuseWhileClosing: false, headRoutes: false, answerClientErrors: false,
    });
    app.get('/quiet', async () => ({ ok: true }));
    app.get('/talks', async (req) => {
      req.log.warn({ authorization: 'Basic c2VjcmV0', detail: 'kept' }, 'asked');
      return { ok: true };
    });
    app.get('/fails', async () => {
      throw new Error('boom');
    });
    await app.ready();
  });
  after(() => app.close());

  it('makes no logger for a request that logs nothing but its access line', async () => {
    const before = children;
    for (let i = 0; i < 20; i += 1) assert.equal((await app.inject({ method: 'GET', url: '/quiet' })).statusCode, 200);
    assert.equal(children - before, 0);
    assert.equal(lines.filter((l) => l['msg'] === 'request' && l['path'] === '/quiet').length, 20);
  });

  it('writes a request\'s own lines with its request id, redacted as every line is', async () => {
    const res = await app.inject({ method: 'GET', url: '/talks' });
    const line = lines.find((l) => l['msg'] === 'asked');
    assert.deepEqual(line && { reqId: line['reqId'], role: line['role'], level: line['level'], authorization: line['authorization'], detail: line['detail'] },
      { reqId: res.headers['x-request-id'], role: 'token', level: 40, authorization: '[redacted]', detail: 'kept' });
  });

  it('logs an unhandled error with the request id of its 500', async () => {
    const res = await app.inject({ method: 'GET', url: '/fails' });
    assert.equal(res.statusCode, 500);
    const line = lines.find((l) => l['msg'] === 'unhandled error');
    assert.equal(line?.['reqId'], res.headers['x-request-id']);
    assert.equal((line?.['err'] as { message?: string } | undefined)?.message, 'boom');
  });
});
