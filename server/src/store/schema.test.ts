import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { dumpSqliteSchema, foldStatements, readSchemaFixtures } from '../../../test/helpers/schema-dump.ts';
import { migrationsFor } from './migrations.ts';
import { createSqliteStore } from './sqlite.ts';

// The fixtures hold the migrations and the schema of the build before each module declared its own
// tables: a database made by any earlier build must upgrade to exactly the schema a new one gets.
const fixtures = readSchemaFixtures();
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const newPath = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-schema-'));
  dirs.push(dir);
  return join(dir, 'rtc.sqlite');
};

describe('the schema history', () => {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    it(`renders for ${dialect} the statements of every earlier version, version by version`, () => {
      const rendered = migrationsFor(dialect).map(foldStatements);
      assert.equal(rendered.length, fixtures.migrations[dialect].length);
      rendered.forEach((statements, i) => assert.deepEqual(statements, fixtures.migrations[dialect][i], `version ${i + 1}`));
    });
  }

  it('gives a new SQLite file the schema an earlier build gave it', async () => {
    const path = newPath();
    await createSqliteStore(path).close();
    assert.deepEqual(dumpSqliteSchema(path), fixtures.sqlite);
  });

  it('brings a SQLite file an earlier build left at any version to that schema', async () => {
    for (let version = 1; version <= fixtures.migrations.sqlite.length; version++) {
      const path = newPath();
      const db = new Database(path);
      for (const statements of fixtures.migrations.sqlite.slice(0, version)) db.exec(statements.join(';\n'));
      db.pragma(`user_version = ${version}`);
      db.close();
      await createSqliteStore(path).close();
      assert.deepEqual(dumpSqliteSchema(path), fixtures.sqlite, `from version ${version}`);
    }
  });
});
