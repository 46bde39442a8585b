import { after, before } from 'node:test';
import { startPostgres, type Postgres } from '../helpers/postgres.ts';
import { createPostgresStore } from '../../server/src/store/postgres.ts';
import { describeStoreContract } from './store-contract.ts';

let server: Postgres;
before(async () => {
  server = await startPostgres();
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
