import { createServer } from 'node:net';

/** A TCP port free on `host` right now (the kernel's pick for port 0), for a server a test starts. */
export function freeTcpPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
