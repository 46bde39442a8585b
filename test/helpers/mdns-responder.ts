import { createSocket, type Socket } from 'node:dgram';

const GROUP = '224.0.0.251';
const PORT = 5353;

/** An mDNS responder (RFC 6762) answering A queries for the `.local` names it is given. */
export interface MdnsResponder {
  /** Answers queries for `name` with `address`: the one already asked, and those to come. */
  answer(name: string, address: string): void;
  /** The names answered so far, in the order of their first answer. */
  answered(): readonly string[];
  close(): Promise<void>;
}

/** A DNS name in wire format: its labels, each after its length, and the root's empty label. */
function encodeName(name: string): Buffer {
  return Buffer.concat([...name.split('.').map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'ascii')])), Buffer.from([0])]);
}

/** One authoritative answer: `name` IN A `address`, TTL 120. */
function response(name: string, address: string): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(0x8400, 2); // response, authoritative
  header.writeUInt16BE(1, 6); // one answer
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(1, 0); // type A
  fixed.writeUInt16BE(0x8001, 2); // class IN, cache flush
  fixed.writeUInt32BE(120, 4);
  fixed.writeUInt16BE(4, 8);
  return Buffer.concat([header, encodeName(name), fixed, Buffer.from(address.split('.').map(Number))]);
}

/** Joins the mDNS group on every interface, beside any other listener of port 5353 (werift's). */
export async function startMdnsResponder(): Promise<MdnsResponder> {
  const socket: Socket = createSocket({ type: 'udp4', reuseAddr: true });
  const names = new Map<string, string>();
  const answered: string[] = [];
  const queries: Buffer[] = [];
  const reply = (name: string, address: string): void => {
    if (!answered.includes(name)) answered.push(name);
    socket.send(response(name, address), PORT, GROUP);
  };
  socket.on('message', (message) => {
    // queries only (QR bit clear); the question names a name this responder answers
    if (message.length < 12 || (message.readUInt16BE(2) & 0x8000) !== 0) return;
    queries.push(message);
    for (const [name, address] of names) if (message.includes(encodeName(name))) reply(name, address);
  });
  await new Promise<void>((resolve) => socket.bind(PORT, resolve));
  socket.addMembership(GROUP);
  socket.setMulticastLoopback(true);
  return {
    answer(name, address) {
      names.set(name, address);
      if (queries.some((q) => q.includes(encodeName(name)))) reply(name, address);
    },
    answered: () => answered,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
