/**
 * The isolation the shared servers of `npm test` rest on: each test file's databases and Redis keys
 * are its own, and what it leaves is gone after it. On the shared servers when the runner started
 * them (scripts/test-servers.mjs), else on servers of this process.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { postgresDatabases } from './postgres-databases.ts';
import { redisKeyspace } from './redis-keyspace.ts';

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('the databases of a test file', () => {
  it('are fresh and apart from another file\'s, and dropped by stop() with its connections', async () => {
    const [mine, theirs] = await Promise.all([postgresDatabases(), postgresDatabases()]);
    try {
      const [a, b] = await Promise.all([mine.createDatabase(), theirs.createDatabase()]);
      assert.notEqual(a, b);
      await query(a, 'CREATE TABLE kept (n INTEGER)');
      assert.deepEqual(await query(b, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"), []);
      // a connection still open does not keep the database
      const open = new pg.Client({ connectionString: a });
      open.on('error', () => {});
      await open.connect();
      try {
        await mine.stop();
      } finally {
        await open.end().catch(() => {});
      }
      // shared: the database is dropped; alone: this file's own server is gone with it
      await assert.rejects(query(a, 'SELECT 1'), /does not exist|ECONNREFUSED/);
      assert.deepEqual(await query(b, 'SELECT 1 AS one'), [{ one: 1 }]);
    } finally {
      await mine.stop();
      await theirs.stop();
    }
  });
});

describe('the Redis keyspace of a test file', () => {
  it('has a prefix of its own, and dispose() deletes its keys and no other file\'s', async () => {
    const [mine, theirs] = await Promise.all([redisKeyspace(), redisKeyspace()]);
    const client = new Redis(mine.url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      assert.notEqual(mine.prefix, theirs.prefix);
      assert.match(mine.prefix, /^test:[0-9a-f]{12}$/);
      const theirKey = `${theirs.prefix}:kept`;
      const theirClient = new Redis(theirs.url);
      await theirClient.set(theirKey, '1');
      theirClient.disconnect();
      for (let i = 0; i < 1200; i++) await client.set(`${mine.prefix}:k${i}`, String(i));
      await mine.dispose();
      // alone, each keyspace is a server of its own, gone with dispose()
      if (theirs.url === mine.url) {
        assert.deepEqual(await client.keys(`${mine.prefix}:*`), []);
        assert.equal(await client.get(theirKey), '1');
      }
    } finally {
      client.disconnect();
      await mine.dispose().catch(() => {});
      await theirs.dispose();
    }
  });
});
