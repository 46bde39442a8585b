import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { placementContract, type PlacementDirectory } from '../../../test/helpers/placement-contract.ts';
import { createSqliteStore } from '../store/sqlite.ts';
import { createSqliteMediaNodeDirectory } from './sqlite.ts';

describe('placement by load in the SQLite file of one data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-placement-'));
  const opened: PlacementDirectory[] = [];
  let files = 0;
  after(() => {
    for (const d of opened) d.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const fresh = async (): Promise<string> => {
    const path = join(dir, `rtc-${++files}.sqlite`);
    // the store creates the tables (store/migrations.ts), as the first process of a data directory does
    const store = createSqliteStore(path);
    await store.close();
    return path;
  };

  placementContract(async (policy, nowMs) => {
    const directory = createSqliteMediaNodeDirectory(await fresh(), { ...policy, nowMs });
    opened.push(directory);
    return directory;
  });

  it('places from several processes\' connections as one: a burst over two connections fills each node once', async () => {
    const path = await fresh();
    const now = (): number => 1_800_000_000_000;
    const [media, tokenA, tokenB] = [0, 1, 2].map(() => createSqliteMediaNodeDirectory(path, { capacity: 3, spill: true, nowMs: now }));
    opened.push(media!, tokenA!, tokenB!);
    const nodes = [1, 2].map((i) => ({ id: `127.0.0.1:${7880 + i}`, host: '127.0.0.1', port: 7880 + i }));
    const errors: unknown[] = [];
    const withdraw = await Promise.all(nodes.map((node) => media!.announce(node, (err) => errors.push(err))));
    const placed = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? tokenA! : tokenB!).place('prj_1', `room-${i}`, 'u', 600)));
    const counts = new Map<string, number>();
    for (const node of placed) counts.set(node.id, (counts.get(node.id) ?? 0) + 1);
    assert.deepEqual([...counts.values()], [3, 3], 'six new rooms over two nodes of capacity 3: three each');
    assert.equal(tokenA!.overCapacityPlacements() + tokenB!.overCapacityPlacements(), 0);
    for (const w of withdraw) await w();
    assert.deepEqual(errors, []);
  });
});
