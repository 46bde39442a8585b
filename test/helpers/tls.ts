import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root.ts';

/**
 * Test-only TLS material, checked in (test/fixtures/tls): a self-signed P-256 certificate for
 * 127.0.0.1 and localhost valid until 2126 with its key, and another P-256 key that matches no
 * certificate. Nothing outside the tests trusts it; the key is public on purpose.
 */
export const TEST_TLS = {
  certFile: join(ROOT, 'test/fixtures/tls/cert.pem'),
  keyFile: join(ROOT, 'test/fixtures/tls/key.pem'),
  otherKeyFile: join(ROOT, 'test/fixtures/tls/other-key.pem'),
} as const;

/** Copies the test certificate for 127.0.0.1 and localhost and its key into `dir` (cert.pem, key.pem). */
export function makeCertificate(dir: string): { certFile: string; keyFile: string } {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  copyFileSync(TEST_TLS.certFile, certFile);
  copyFileSync(TEST_TLS.keyFile, keyFile);
  return { certFile, keyFile };
}
