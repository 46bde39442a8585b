import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { postgresDatabases, type PostgresDatabases } from '../helpers/postgres-databases.ts';
import { dumpPostgresSchema, readSchemaFixtures } from '../helpers/schema-dump.ts';
import { createPostgresStore } from '../../server/src/store/postgres.ts';
import { describeStoreContract } from './store-contract.ts';

let server: PostgresDatabases;
before(async () => {
  server = await postgresDatabases();
});
after(async () => {
  await server.stop();
});

// each store of one database is another pool on it, as another process would open it
describeStoreContract('postgres', {
  async newDatabase() {
    const url = await server.createDatabase();
    return () => createPostgresStore(url, { poolSize: 4 });
  },
});

// the fixtures hold the migrations and the schema of the build before each module declared its own tables
describe('postgres schema history', () => {
  const fixtures = readSchemaFixtures();

  it('gives a new database the schema an earlier build gave it', async () => {
    const url = await server.createDatabase();
    await (await createPostgresStore(url, { poolSize: 1 })).close();
    assert.deepEqual(await dumpPostgresSchema(url), fixtures.postgres);
  });

  it('brings a database an earlier build left at any version to that schema', async () => {
    for (let version = 1; version <= fixtures.migrations.postgres.length; version++) {
      const url = await server.createDatabase();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
      for (const [i, statements] of fixtures.migrations.postgres.slice(0, version).entries()) {
        await client.query(statements.join(';\n'));
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)', [i + 1]);
      }
      await client.end();
      await (await createPostgresStore(url, { poolSize: 1 })).close();
      assert.deepEqual(await dumpPostgresSchema(url), fixtures.postgres, `from version ${version}`);
    }
  });
});
