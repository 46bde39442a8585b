import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { createPostgresStore, StoreUnavailableError } from '../../server/src/store/postgres.ts';
import { isConnectionError } from '../../server/src/sql/postgres.ts';
import type { Store } from '../../server/src/store/port.ts';

const account = (id: string) => ({ id, email: `${id}@example.test`, passwordHash: 'h', createdAt: 1 });

describe('the PostgreSQL store while its server restarts (docs/operations/scale-out.md, "PostgreSQL restart")', () => {
  let server: Postgres;
  let store: Store;
  const idleErrors: Error[] = [];

  before(async () => {
    server = await startPostgres();
    store = await createPostgresStore(await server.createDatabase(), { poolSize: 4, onConnectionError: (err) => idleErrors.push(err) });
  });
  after(async () => {
    await store?.close();
    await server?.stop();
  });

  it('refuses every call as unavailable while the server is down, and serves again from the same pool once it is back', async () => {
    assert.equal(await store.insertAccount(account('acc_before')), true);
    await server.down();
    try {
      for (const call of [() => store.ping(), () => store.findAccountByEmail('acc_before@example.test'), () => store.insertAccount(account('acc_during'))]) {
        await assert.rejects(call(), (err: unknown) => {
          assert.ok(err instanceof StoreUnavailableError, String(err));
          assert.equal(err.code, 'unavailable');
          assert.equal(err.status, 503);
          assert.equal(err.retryAfterSec, 1);
          assert.ok(isConnectionError(err.cause), String(err.cause));
          return true;
        });
      }
    } finally {
      await server.up();
    }
    assert.equal((await store.findAccountByEmail('acc_before@example.test'))?.id, 'acc_before');
    assert.equal(await store.findAccountByEmail('acc_during@example.test'), undefined, 'a refused write was not done');
    assert.equal(await store.insertAccount(account('acc_after')), true);
  });

  it('leaves an SQL error what it is', async () => {
    // a session of no account: the server answers with a foreign key violation, not a connection problem
    await assert.rejects(store.insertSession({
      id: 'ses_orphan', accountId: 'acc_missing', familyId: 'fam', accessHash: 'a', accessExpiresAt: 1, refreshHash: 'r',
      refreshExpiresAt: 1, status: 'active', createdAt: 1,
    }), (err: unknown) => {
      assert.ok(!(err instanceof StoreUnavailableError), String(err));
      assert.equal((err as { code?: string }).code, '23503');
      return true;
    });
  });
});

describe('isConnectionError', () => {
  const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });
  it('says yes to a refused or reset socket, a server shutting down or starting up, a connection exception and a pool timeout', () => {
    for (const err of [
      coded('ECONNREFUSED'), coded('ECONNRESET'), coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'), coded('08006'), coded('08001'), coded('53300'),
      new Error('timeout exceeded when trying to connect'), new Error('Connection terminated unexpectedly'),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
    ]) assert.equal(isConnectionError(err), true, `${(err as { code?: string }).code ?? ''} ${err.message}`);
  });
  it('says no to SQL errors and anything else', () => {
    for (const err of [
      coded('23505', 'duplicate key value violates unique constraint'), coded('42601', 'syntax error'), coded('22P02'),
      coded('40001', 'could not serialize access'), new Error('boom'), new TypeError('x is not a function'), 'ECONNREFUSED', undefined,
    ]) assert.equal(isConnectionError(err), false, String(err));
  });
});
