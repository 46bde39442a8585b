/**
 * The guards in front of werift's DTLS client (dtls-verify.ts), between a werift DTLS client (the
 * media server's side) and a werift DTLS server (a browser's side) over an in-memory datagram link
 * the test holds: what each side sent, and what is delivered when.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DtlsClient, DtlsServer, type DtlsKeys } from 'werift';
import { generateDtlsKeys, waitFor } from '../../main/client/media/loopback-peer.ts';
import { installDtlsKeyCheck } from './dtls-verify.ts';

/** DTLS record content types (RFC 6347, 4.1). */
const HANDSHAKE = 22;
const APPLICATION_DATA = 23;
/** Handshake message types (RFC 5246, 7.4). */
const SERVER_HELLO = 2;

/** One side of the link: werift's `Transport`, recording what it sends. */
class End {
  readonly sent: Buffer[] = [];
  peer: End | undefined;
  onData: (data: Buffer) => void = () => undefined;
  readonly type = 'udp';
  readonly address = { address: '127.0.0.1', port: 0, family: 'IPv4' };
  closed = false;

  send = (data: Buffer): Promise<void> => {
    this.sent.push(Buffer.from(data));
    const peer = this.peer;
    // a datagram arrives later, as from a socket, never within the sender's call
    if (peer && !this.closed) setImmediate(() => peer.onData(data));
    return Promise.resolve();
  };

  close = (): Promise<void> => {
    this.closed = true;
    return Promise.resolve();
  };
}

function link(): [End, End] {
  const a = new End();
  const b = new End();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

/** The content type of a datagram's first record, and the handshake type of its first message in the clear (epoch 0). */
function recordOf(datagram: Buffer): { readonly contentType: number; readonly epoch: number; readonly handshakeType: number | undefined } {
  const contentType = datagram.readUInt8(0);
  const epoch = datagram.readUInt16BE(3);
  const handshakeType = contentType === HANDSHAKE && epoch === 0 ? datagram.readUInt8(13) : undefined;
  return { contentType, epoch, handshakeType };
}

interface Handshaken {
  readonly client: DtlsClient;
  readonly server: DtlsServer;
  readonly clientEnd: End;
  readonly serverEnd: End;
  readonly clientErrors: Error[];
}

async function handshake(clientKeys: DtlsKeys, serverKeys: DtlsKeys): Promise<Handshaken> {
  installDtlsKeyCheck();
  const [clientEnd, serverEnd] = link();
  const options = (keys: DtlsKeys, transport: End) => ({
    cert: keys.certPem, key: keys.keyPem, signatureHash: keys.signatureHash, transport, srtpProfiles: [1, 7] as (1 | 7)[], extendedMasterSecret: true,
  });
  const server = new DtlsServer({ ...options(serverKeys, serverEnd), certificateRequest: true });
  const client = new DtlsClient(options(clientKeys, clientEnd));
  const clientErrors: Error[] = [];
  client.onError.subscribe((err) => clientErrors.push(err));
  const connected = Promise.all([new Promise((r) => client.onConnect.once(r)), new Promise((r) => server.onConnect.once(r))]);
  client.connect().catch((err: Error) => clientErrors.push(err));
  await connected;
  return { client, server, clientEnd, serverEnd, clientErrors };
}

describe('the DTLS client once its handshake is done (dtls-verify.ts)', () => {
  it('ignores a flight of the server it already answered: it sends no handshake again and stays connected', async () => {
    const [clientKeys, serverKeys] = await Promise.all([generateDtlsKeys(), generateDtlsKeys()]);
    const { client, server, clientEnd, serverEnd, clientErrors } = await handshake(clientKeys, serverKeys);
    try {
      // the server's flight 4, from its ServerHello up to (not with) its Finished, as a browser
      // retransmits it when the client's answer is slow to come: the copy may arrive after the end
      const records = serverEnd.sent.map(recordOf);
      const from = records.findIndex((r) => r.handshakeType === SERVER_HELLO);
      const to = records.findIndex((r) => r.contentType === HANDSHAKE && r.epoch === 1);
      assert.ok(from >= 0 && to > from, JSON.stringify(records));
      const flight4 = serverEnd.sent.slice(from, to).filter((_, i) => records[from + i]!.contentType === HANDSHAKE);
      const sentBefore = clientEnd.sent.length;
      for (const datagram of flight4) serverEnd.send(datagram);

      // then application data, delivered after the copies: by the time it is read, the copies were
      const received: Buffer[] = [];
      client.onData.subscribe((data) => received.push(data));
      await server.send(Buffer.from('after the copies'));
      await waitFor(() => received.length > 0, 'the application data after the copies');
      assert.equal(received[0]!.toString(), 'after the copies');

      const answered = clientEnd.sent.slice(sentBefore).map(recordOf).filter((r) => r.contentType !== APPLICATION_DATA);
      assert.deepEqual(answered, [], 'the client answered the copy of a flight it had answered');
      assert.equal(client.connected, true);
      assert.deepEqual(clientErrors, []);
      // and both ways still carry data
      const back: Buffer[] = [];
      server.onData.subscribe((data) => back.push(data));
      await client.send(Buffer.from('still up'));
      await waitFor(() => back.length > 0, 'data from the client');
      assert.equal(back[0]!.toString(), 'still up');
    } finally {
      client.close();
      server.close();
    }
  });

  it('sends no flight again from a handler werift began before the Finished and ends after it', async () => {
    const [clientKeys, serverKeys] = await Promise.all([generateDtlsKeys(), generateDtlsKeys()]);
    const { client, server, clientEnd, clientErrors } = await handshake(clientKeys, serverKeys);
    try {
      // what werift's handler of a copy's ServerHelloDone does last, once the rest of its flight
      // is in: under load that can come after the Finished was read
      const internals = client as unknown as { flight5?: { exec(): Promise<void> } };
      assert.ok(internals.flight5, 'werift keeps the flight of the handshake');
      const sentBefore = clientEnd.sent.length;
      await internals.flight5.exec();
      const received: Buffer[] = [];
      server.onData.subscribe((data) => received.push(data));
      await client.send(Buffer.from('after the late handler'));
      await waitFor(() => received.length > 0, 'data from the client after the late handler');
      const answered = clientEnd.sent.slice(sentBefore).map(recordOf).filter((r) => r.contentType !== APPLICATION_DATA);
      assert.deepEqual(answered, [], 'the client sent its flight again');
      assert.equal(received[0]!.toString(), 'after the late handler');
      assert.equal(client.connected, true);
      assert.deepEqual(clientErrors, []);
    } finally {
      client.close();
      server.close();
    }
  });
});
