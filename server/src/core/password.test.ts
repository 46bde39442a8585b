import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPasswordHasher } from './password.ts';

describe('password hashing', () => {
  it('hashes at the production cost by default and records it in the hash', async () => {
    const hasher = createPasswordHasher();
    const stored = await hasher.hash('a long passphrase');
    assert.match(stored, /^scrypt\$8192\$8\$10\$[\w-]{22}\$[\w-]{43}$/);
    assert.equal(await hasher.verify('a long passphrase', stored), true);
    assert.equal(await hasher.verify('a long passphrasf', stored), false);
  });

  it('still verifies a hash made at the earlier cost (N=2^15, r=8, p=3)', async () => {
    const earlier = createPasswordHasher({ N: 32768, r: 8, p: 3 });
    const stored = await earlier.hash('an older passphrase');
    assert.match(stored, /^scrypt\$32768\$8\$3\$/);
    assert.equal(await createPasswordHasher().verify('an older passphrase', stored), true);
    assert.equal(await createPasswordHasher().verify('an older passphrasf', stored), false);
  });

  it('verifies with the parameters recorded in the hash, whatever the hasher\'s own cost', async () => {
    const cheap = createPasswordHasher({ N: 1024, r: 8, p: 1 });
    const stored = await cheap.hash('pw');
    assert.match(stored, /^scrypt\$1024\$8\$1\$/);
    assert.equal(await createPasswordHasher().verify('pw', stored), true);
  });

  it('tells a hash of another cost, or of no known form, from one of its own', async () => {
    const hasher = createPasswordHasher({ N: 1024, r: 8, p: 1 });
    assert.equal(hasher.needsRehash(await hasher.hash('pw')), false);
    assert.equal(hasher.needsRehash(await createPasswordHasher({ N: 1024, r: 8, p: 2 }).hash('pw')), true);
    assert.equal(hasher.needsRehash(await createPasswordHasher({ N: 2048, r: 8, p: 1 }).hash('pw')), true);
    assert.equal(hasher.needsRehash('bcrypt$whatever'), true);
  });

  it('refuses malformed hashes and compares Unicode passwords in NFC', async () => {
    const hasher = createPasswordHasher({ N: 1024, r: 8, p: 1 });
    assert.equal(await hasher.verify('pw', 'bcrypt$whatever'), false);
    assert.equal(await hasher.verify('pw', 'scrypt$1024$8$1$salt'), false);
    const stored = await hasher.hash('caf\u00e9');
    assert.equal(await hasher.verify('cafe\u0301', stored), true);
    assert.notEqual(await hasher.dummyHash(), stored);
    assert.equal(await hasher.dummyHash(), await hasher.dummyHash(), 'the dummy hash is made once');
  });
});
