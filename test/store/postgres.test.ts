import { after, before } from 'node:test';
import { postgresDatabases, type PostgresDatabases } from '../helpers/postgres-databases.ts';
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
