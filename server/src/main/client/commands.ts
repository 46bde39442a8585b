/**
 * The `rtc` commands for people: they talk to a running platform over its public HTTP API only
 * (docs/reference/cli.md).
 */
import { readFileSync } from 'node:fs';
import type {
  Credential, CredentialList, CredentialWithSecret, ParticipantRemoved, RevocationResult, RoomEnded, RoomList, RtcParticipant,
  RtcRoom, TokenRequest,
} from '@rtc/protocol';
import type { TokenClient } from '@rtc/server-sdk';
import { MAX_BAN_SECONDS, MAX_STREAM_ID } from '@rtc/protocol';
import { createAppClient, viaAppClient } from './app-client.ts';
import {
  asCustomer, baseUrl, exportLine, JSON_FLAG, parseCommand, positional, print, required, SESSION_FLAGS, sessionOf, storedSession, str, URL_FLAG,
  type ClientIO, type Options, type Values,
} from './common.ts';
import { callApi, CommandError, removeSession, sessionFile, UsageError, writeSession } from './http.ts';
import { grant } from './grant-verify.ts';
import { projects } from './projects-command.ts';
import { webhooks, WEBHOOKS_NOTE, WEBHOOKS_USAGE } from './webhooks-command.ts';

export type { ClientIO } from './common.ts';

const SESSION_NOTE = `Session commands (logout, projects, credentials) act as the stored session of rtc login;
  --url, if given, must name the platform it was made on.`;
const APP_NOTE = `App commands (token, rooms, load-test) authenticate with --app-id/--app-secret (or
  RTC_APP_ID/RTC_APP_SECRET) against --url (or RTC_URL, or the login's URL).`;

export const CLIENT_USAGE = `  login --url URL --email E [--register]
                 sign in to the customer API (password from RTC_PASSWORD, standard input or a
                 prompt); --register creates the account first when it does not exist yet
  logout [--url URL]
                 end the session and forget it
  projects list [--url URL] | projects create --name NAME [--reuse] [--env] [--url URL]
                 --reuse prints the active project of that name when there is one instead of
                 creating another; --env prints its id as an export line (RTC_PROJECT) for eval
  credentials list|create|rotate|revoke --project ID [APP_ID] [--url URL]
                 create: [--name N] [--scopes publisher,subscriber] [--ip-allowlist CIDR,…]
                 [--max-ttl S]; the App Secret is printed once, on create and rotate
                 (--env prints it as export lines for eval)
  token create --room R --user U --role ROLE [--publish 1,2] [--subscribe 3,4] [--subscribe-room]
               [--ttl S] [--turn] [--signaling] [--url URL] [--app-id ID --app-secret S]
                 --publish: the stream ids the user may publish (one per microphone, camera or
                 screen; each publisher of a room needs its own); --subscribe: those it may receive
  token revoke --handle rvk_… [--url URL] [--app-id ID --app-secret S]
  rooms list | rooms show ROOM | rooms remove ROOM PARTICIPANT [--ban S] | rooms end ROOM
                 [--url URL] [--app-id ID --app-secret S]
                 --ban keeps the removed user out of the room S seconds (up to 604800)
                 list: [--limit N] [--cursor C] [--rooms ROOM,…] (one page; --all follows next_cursor)
  rooms create ROOM | rooms update ROOM [--metadata TEXT] [--max-participants N] [--empty-timeout S]
  rooms send-data ROOM (TEXT | --file F) [--topic T] [--to PARTICIPANT,…] [--to-user USER,…]
                 sends a data message to the room's apps (to those named with --to/--to-user)
  rooms mute ROOM PARTICIPANT STREAM [--unmute]
                 stop (or, with --unmute, resume) forwarding one stream the participant publishes
  rooms permissions ROOM PARTICIPANT [--publish 1,2] [--subscribe 3,4 | --subscribe-room]
                 change what a live participant may publish and receive (flags left out keep
                 their value; --publish "" takes publishing away)
  grant verify (GRANT | --token-response FILE) [--url URL]
                 check a media grant or signaling token against the JWKS of URL (api or token
                 role); --token-response reads a token response's JSON (- for standard input,
                 e.g. rtc token create … | rtc grant verify --token-response -) and checks its media.grant
${WEBHOOKS_USAGE}
  load-test [--room R] [--publishers N] [--subscribers N] [--duration 30s] [--video-bitrate 1M]
            [--audio on|off] [--simulcast] [--url URL] [--app-id ID --app-secret S]
                 join N synthetic publishers (VP8 video, Opus audio) and subscribers (everything in
                 the room) over WebRTC, then report join time, bitrate, packet loss, frames/s and
                 this process's CPU; exit 1 when a participant failed to join
  ${SESSION_NOTE}
  ${APP_NOTE}
  ${WEBHOOKS_NOTE}
  Every client command takes --json for machine-readable output.`;

/** What the help of a client command adds below its entries (docs/reference/cli.md). */
export const CLIENT_NOTES: Readonly<Record<string, string>> = {
  logout: SESSION_NOTE,
  projects: SESSION_NOTE,
  credentials: SESSION_NOTE,
  token: APP_NOTE,
  rooms: APP_NOTE,
  webhooks: WEBHOOKS_NOTE,
  'load-test': APP_NOTE,
};

const APP_FLAGS: Options = { ...URL_FLAG, 'app-id': { type: 'string' }, 'app-secret': { type: 'string' } };

function numbers(command: string, flag: string, text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (!list.every((s) => /^\d+$/.test(s))) throw new UsageError(`${command}: --${flag} takes comma-separated stream numbers, e.g. 1,2`);
  return list.map(Number);
}

function integer(command: string, flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`${command}: --${flag} takes a whole number of seconds`);
  return Number(text);
}

/** The token API's client for `--url` and the credential of `--app-id`/`--app-secret` (or RTC_APP_ID/RTC_APP_SECRET). */
function appClient(command: string, values: Values, io: ClientIO): TokenClient {
  const url = baseUrl(command, values, io);
  const appId = str(values, 'app-id') || io.env['RTC_APP_ID'];
  const appSecret = str(values, 'app-secret') || io.env['RTC_APP_SECRET'];
  if (!appId || !appSecret) throw new UsageError(`${command}: --app-id and --app-secret are required (or set RTC_APP_ID and RTC_APP_SECRET)`);
  return createAppClient(url, appId, appSecret);
}

async function login(args: readonly string[], io: ClientIO): Promise<number> {
  const { values } = parseCommand('login', args, { ...URL_FLAG, ...JSON_FLAG, email: { type: 'string' }, register: { type: 'boolean' } }, 0);
  const url = baseUrl('login', values, io);
  const email = required('login', values, 'email');
  const password = io.env['RTC_PASSWORD'] || await io.readPassword(`password for ${email}: `);
  if (!password) throw new UsageError('login: no password (set RTC_PASSWORD, pipe it on standard input or type it at the prompt)');
  let body: unknown;
  let created = false;
  if (values['register'] === true) {
    try {
      body = await callApi(url, '/v1/auth/register', { body: { email, password } });
      created = true;
    } catch (err) {
      // an account that exists already: sign in to it
      if (!(err instanceof CommandError && 'code' in err && err.code === 'conflict')) throw err;
    }
  }
  body ??= await callApi(url, '/v1/auth/login', { body: { email, password } });
  writeSession(io.env, sessionOf(body, url, email, io.nowSec()));
  print(io, values['json'] === true, { logged_in: true, created, email, url }, () => [
    `${created ? 'account created; ' : ''}logged in to ${url} as ${email} (session kept in ${sessionFile(io.env)})`,
  ]);
  return 0;
}

async function logout(args: readonly string[], io: ClientIO): Promise<number> {
  const { values } = parseCommand('logout', args, SESSION_FLAGS, 0);
  const session = storedSession(values, io);
  if (!session) {
    io.out('not logged in');
    return 0;
  }
  try {
    await callApi(session.url, '/v1/auth/logout', { method: 'POST', auth: { bearer: session.access_token } });
  } catch (err) {
    // a session the API no longer knows is as good as ended; anything else is reported after forgetting it
    if (!(err instanceof CommandError && 'status' in err && err.status === 401)) {
      removeSession(io.env);
      throw err;
    }
  }
  removeSession(io.env);
  io.out('logged out');
  return 0;
}

/** `export` lines a shell can eval: the App ID and App Secret as the client commands read them. */
function credentialEnv(c: CredentialWithSecret): string[] {
  return [exportLine('RTC_APP_ID', c.app_id), exportLine('RTC_APP_SECRET', c.app_secret)];
}

function credentialLines(c: Credential | CredentialWithSecret): string[] {
  const lines = [`${c.app_id}  ${c.status}  ${c.scopes.join(',')}  ${c.name}`];
  if ('app_secret' in c) lines.push(`app_secret: ${c.app_secret}`, 'The App Secret is shown this once: keep it in your secret store.');
  return lines;
}

async function credentials(args: readonly string[], io: ClientIO): Promise<number> {
  const [sub, ...rest] = args;
  const command = `credentials ${sub ?? ''}`.trim();
  const base = { ...SESSION_FLAGS, project: { type: 'string' } } satisfies Options;
  if (sub === 'list') {
    const { values } = parseCommand(command, rest, base, 0);
    const project = encodeURIComponent(required(command, values, 'project'));
    const body = await asCustomer<CredentialList>(io, values, `/v1/projects/${project}/credentials`);
    print(io, values['json'] === true, body, () => (body.credentials.length === 0 ? ['no credentials'] : body.credentials.flatMap(credentialLines)));
    return 0;
  }
  if (sub === 'create') {
    const { values } = parseCommand(command, rest, {
      ...base, env: { type: 'boolean' }, name: { type: 'string' }, scopes: { type: 'string' }, 'ip-allowlist': { type: 'string' },
      'max-ttl': { type: 'string' },
    }, 0);
    const project = encodeURIComponent(required(command, values, 'project'));
    const list = (flag: string): string[] | undefined => str(values, flag)?.split(',').map((s) => s.trim()).filter(Boolean);
    const maxTtl = integer(command, 'max-ttl', str(values, 'max-ttl'));
    const body = await asCustomer<CredentialWithSecret>(io, values, `/v1/projects/${project}/credentials`, {
      body: {
        scopes: list('scopes') ?? ['publisher', 'subscriber'],
        ...(str(values, 'name') === undefined ? {} : { name: str(values, 'name') }),
        ...(list('ip-allowlist') === undefined ? {} : { ip_allowlist: list('ip-allowlist') }),
        ...(maxTtl === undefined ? {} : { max_ttl_seconds: maxTtl }),
      },
    });
    print(io, values['json'] === true, body, () => (values['env'] === true ? credentialEnv(body) : credentialLines(body)));
    return 0;
  }
  if (sub === 'rotate' || sub === 'revoke') {
    const { values, positionals } = parseCommand(command, rest, sub === 'rotate' ? { ...base, env: { type: 'boolean' } } : base, 1);
    const project = encodeURIComponent(required(command, values, 'project'));
    const appId = encodeURIComponent(positional(command, positionals, 0, 'APP_ID'));
    // rotate answers the credential with its new App Secret, revoke without one
    const body = await asCustomer<Credential | CredentialWithSecret>(io, values, `/v1/projects/${project}/credentials/${appId}/${sub}`, { method: 'POST' });
    print(io, values['json'] === true, body, () => (values['env'] === true && 'app_secret' in body ? credentialEnv(body) : credentialLines(body)));
    return 0;
  }
  throw new UsageError(`credentials: unknown subcommand ${JSON.stringify(sub ?? '')} (list, create, rotate, revoke)`);
}

async function token(args: readonly string[], io: ClientIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values } = parseCommand('token create', rest, {
      ...APP_FLAGS, ...JSON_FLAG, room: { type: 'string' }, user: { type: 'string' }, role: { type: 'string' },
      publish: { type: 'string' }, subscribe: { type: 'string' }, 'subscribe-room': { type: 'boolean' },
      ttl: { type: 'string' }, turn: { type: 'boolean' }, signaling: { type: 'boolean' },
    }, 0);
    const c = 'token create';
    const publish = numbers(c, 'publish', str(values, 'publish'));
    const subscribe = numbers(c, 'subscribe', str(values, 'subscribe'));
    const ttl = integer(c, 'ttl', str(values, 'ttl'));
    // the role is checked by the API, which names the roles it accepts
    const request = {
      room_id: required(c, values, 'room'),
      user_id: required(c, values, 'user'),
      role: required(c, values, 'role') as TokenRequest['role'],
      ...(publish === undefined ? {} : { publish_streams: publish }),
      ...(subscribe === undefined ? {} : { subscribe_streams: subscribe }),
      ...(values['subscribe-room'] === true ? { subscribe_room: true } : {}),
      ...(ttl === undefined ? {} : { ttl_seconds: ttl }),
      ...(values['turn'] === true ? { turn: true } : {}),
      ...(values['signaling'] === true ? { signaling: true } : {}),
    };
    const body = await viaAppClient(appClient(c, values, io), (client) => client.issue(request));
    io.out(JSON.stringify(body, null, 2));
    return 0;
  }
  if (sub === 'revoke') {
    const { values } = parseCommand('token revoke', rest, { ...APP_FLAGS, ...JSON_FLAG, handle: { type: 'string' } }, 0);
    const c = 'token revoke';
    const handle = required(c, values, 'handle');
    await viaAppClient(appClient(c, values, io), (client) => client.revoke(handle));
    const body: RevocationResult = { revoked: true };
    print(io, values['json'] === true, body, () => ['revoked']);
    return 0;
  }
  throw new UsageError(`token: unknown subcommand ${JSON.stringify(sub ?? '')} (create, revoke)`);
}

function participantLine(p: RtcParticipant): string {
  const list = (v: readonly number[]): string => (v.length > 0 ? v.join(',') : '-');
  return `  ${p.participant_id}  user=${p.user_id}  role=${p.role}  publish=${list(p.publish_streams)}  `
    + `subscribe=${p.subscribe_room ? 'room' : list(p.subscribe_streams)}`;
}

/** The participant's line, then one line per stream it publishes. */
function participantLines(p: RtcParticipant): string[] {
  return [participantLine(p), ...p.streams.map((s) => {
    const layers = s.layers.map((l) => `${l.rid ?? '-'}:${l.width ?? '?'}x${l.height ?? '?'}@${l.bitrate ?? '?'}`).join(',');
    return `    stream ${s.stream_id}  ${s.kind}  source=${s.source}${s.muted ? '  muted' : ''}${layers ? `  layers=${layers}` : ''}`;
  })];
}

function roomLines(room: RtcRoom, withParticipants: boolean): string[] {
  const people = room.participants;
  const started = new Date(room.started_at * 1000).toISOString();
  const head = `${room.room_id}  ${people.length} participant${people.length === 1 ? '' : 's'}  media=${room.media_node ?? '-'}  started=${started}`;
  return withParticipants ? [head, ...people.flatMap(participantLines)] : [head];
}

async function rooms(args: readonly string[], io: ClientIO): Promise<number> {
  const [sub, ...rest] = args;
  const command = `rooms ${sub ?? ''}`.trim();
  const flags = { ...APP_FLAGS, ...JSON_FLAG } satisfies Options;
  const call = <T>(values: Values, run: (client: TokenClient) => Promise<T>): Promise<T> => viaAppClient(appClient(command, values, io), run);
  const room = (positionals: readonly string[]): string => positional(command, positionals, 0, 'ROOM');
  if (sub === 'list') return listRoomsCommand(command, rest, io);
  if (sub === 'create' || sub === 'update' || sub === 'send-data') return roomDataCommand(sub, rest, io);
  if (sub === 'show') {
    const { values, positionals } = parseCommand(command, rest, flags, 1);
    const roomId = room(positionals);
    const body = await call(values, (client) => client.getRoom(roomId));
    print(io, values['json'] === true, body, () => roomLines(body, true));
    return 0;
  }
  if (sub === 'remove') {
    const { values, positionals } = parseCommand(command, rest, { ...flags, ban: { type: 'string' } }, 2);
    const roomId = room(positionals);
    const participant = positional(command, positionals, 1, 'PARTICIPANT');
    const banSeconds = integer(command, 'ban', str(values, 'ban'));
    if (banSeconds !== undefined && (banSeconds < 1 || banSeconds > MAX_BAN_SECONDS)) {
      throw new UsageError(`${command}: --ban takes 1 to ${MAX_BAN_SECONDS} seconds`);
    }
    const body: ParticipantRemoved = await call(values, (client) => client.removeParticipant(roomId, participant, { banSeconds }));
    print(io, values['json'] === true, body, () => ['removed', body.banned_until === undefined
      ? `${body.user_id}: its tokens for the room issued up to ${new Date(body.cut_off_at * 1000).toISOString()} are refused`
      : `${body.user_id}: banned from the room until ${new Date(body.banned_until * 1000).toISOString()}`]);
    return 0;
  }
  if (sub === 'end') {
    const { values, positionals } = parseCommand(command, rest, flags, 1);
    const roomId = room(positionals);
    const { participants, cut_off_at } = await call(values, (client) => client.endRoom(roomId));
    const body: RoomEnded = { ended: true, participants, cut_off_at };
    print(io, values['json'] === true, body, () => [`ended (${participants} participants disconnected)`]);
    return 0;
  }
  const more = ROOM_PARTICIPANT_COMMANDS[sub ?? ''];
  if (more) return more(command, rest, io);
  throw new UsageError(`rooms: unknown subcommand ${JSON.stringify(sub ?? '')} (list, show, remove, end, mute, permissions, create, update, send-data)`);
}

/** `rooms list`: one page, or with --all every page (docs/reference/cli.md). */
async function listRoomsCommand(command: string, rest: readonly string[], io: ClientIO): Promise<number> {
  const flags = {
    ...APP_FLAGS, ...JSON_FLAG, limit: { type: 'string' }, cursor: { type: 'string' }, rooms: { type: 'string' }, all: { type: 'boolean' },
  } satisfies Options;
  const { values } = parseCommand(command, rest, flags, 0);
  const limit = str(values, 'limit');
  if (limit !== undefined && !/^\d{1,3}$/.test(limit)) throw new UsageError(`${command}: --limit takes 1 to 100`);
  const roomIds = str(values, 'rooms')?.split(',');
  let cursor = str(values, 'cursor');
  const rooms: RtcRoom[] = [];
  let next: string | null = null;
  await viaAppClient(appClient(command, values, io), async (client) => {
    do {
      const page = await client.listRooms({ limit: limit === undefined ? undefined : Number(limit), cursor, roomIds });
      rooms.push(...page.rooms);
      next = page.next_cursor;
      cursor = next ?? undefined;
    } while (values['all'] === true && next !== null);
  });
  const body: RoomList = { rooms, next_cursor: next };
  print(io, values['json'] === true, body, () => [
    ...(rooms.length === 0 ? ['no live rooms'] : rooms.flatMap((r) => roomLines(r, false))),
    ...(next === null ? [] : [`more: --cursor ${next as string}`]),
  ]);
  return 0;
}

/** `rooms create|update|send-data` (docs/reference/cli.md, "Rooms"). */
async function roomDataCommand(sub: 'create' | 'update' | 'send-data', rest: readonly string[], io: ClientIO): Promise<number> {
  const command = `rooms ${sub}`;
  const base = { ...APP_FLAGS, ...JSON_FLAG } satisfies Options;
  if (sub === 'send-data') {
    const flags = { ...base, topic: { type: 'string' }, to: { type: 'string' }, 'to-user': { type: 'string' }, file: { type: 'string' } } satisfies Options;
    const { values, positionals } = parseCommand(command, rest, flags, 2);
    const roomId = positional(command, positionals, 0, 'ROOM');
    const file = str(values, 'file');
    const text = positionals[1];
    if ((file === undefined) === (text === undefined)) throw new UsageError(`${command}: give the message as TEXT or --file F, not both`);
    let data: Uint8Array | string;
    try {
      data = file === undefined ? text! : readFileSync(file);
    } catch (err) {
      throw new CommandError(`${command}: cannot read ${file ?? ''}: ${(err as Error).message}`);
    }
    const list = (name: string): string[] | undefined => str(values, name)?.split(',').filter((v) => v !== '');
    const body = await viaAppClient(appClient(command, values, io), (client) => client.sendData(roomId, data, {
      topic: str(values, 'topic'), destinationParticipantIds: list('to'), destinationUserIds: list('to-user'),
    }));
    print(io, values['json'] === true, body, () => [`sent to ${body.recipients} participant${body.recipients === 1 ? '' : 's'}`]);
    return 0;
  }
  const flags = { ...base, metadata: { type: 'string' }, 'max-participants': { type: 'string' }, 'empty-timeout': { type: 'string' } } satisfies Options;
  const { values, positionals } = parseCommand(command, rest, flags, 1);
  const roomId = positional(command, positionals, 0, 'ROOM');
  const maxText = str(values, 'max-participants');
  if (maxText !== undefined && !/^\d{1,3}$/.test(maxText)) throw new UsageError(`${command}: --max-participants takes 0 to 256`);
  const settings = {
    ...(str(values, 'metadata') !== undefined && { metadata: str(values, 'metadata') }),
    ...(maxText !== undefined && { max_participants: Number(maxText) }),
    ...(str(values, 'empty-timeout') !== undefined && { empty_timeout: integer(command, 'empty-timeout', str(values, 'empty-timeout')) }),
  };
  const body = await viaAppClient(appClient(command, values, io), (client) => (sub === 'create'
    ? client.createRoom({ room_id: roomId, ...settings })
    : client.updateRoom(roomId, settings)));
  print(io, values['json'] === true, body, () => roomLines(body, true));
  return 0;
}

/** `rooms mute` and `rooms permissions`: a live participant's streams and permissions (docs/reference/cli.md). */
const ROOM_PARTICIPANT_COMMANDS: Readonly<Record<string, (command: string, rest: readonly string[], io: ClientIO) => Promise<number>>> = {
  async mute(command, rest, io) {
    const { values, positionals } = parseCommand(command, rest, { ...APP_FLAGS, ...JSON_FLAG, unmute: { type: 'boolean' } }, 3);
    const roomId = positional(command, positionals, 0, 'ROOM');
    const participant = positional(command, positionals, 1, 'PARTICIPANT');
    const streamText = positional(command, positionals, 2, 'STREAM');
    if (!/^\d{1,10}$/.test(streamText) || Number(streamText) < 1 || Number(streamText) > MAX_STREAM_ID) {
      throw new UsageError(`${command}: STREAM is a stream number from 1 to ${MAX_STREAM_ID}`);
    }
    const streamId = Number(streamText);
    const muted = values['unmute'] !== true;
    const body = await viaAppClient(appClient(command, values, io), (client) => client.muteStream(roomId, participant, streamId, muted));
    print(io, values['json'] === true, body, () => [`stream ${streamId} ${muted ? 'muted' : 'unmuted'}`, ...participantLines(body)]);
    return 0;
  },
  async permissions(command, rest, io) {
    const { values, positionals } = parseCommand(command, rest, {
      ...APP_FLAGS, ...JSON_FLAG, publish: { type: 'string' }, subscribe: { type: 'string' }, 'subscribe-room': { type: 'boolean' },
    }, 2);
    const roomId = positional(command, positionals, 0, 'ROOM');
    const participant = positional(command, positionals, 1, 'PARTICIPANT');
    const publish = numbers(command, 'publish', str(values, 'publish'));
    const subscribe = numbers(command, 'subscribe', str(values, 'subscribe'));
    const subscribeRoom = values['subscribe-room'] === true;
    if (subscribe !== undefined && subscribeRoom) throw new UsageError(`${command}: --subscribe and --subscribe-room exclude each other`);
    if (publish === undefined && subscribe === undefined && !subscribeRoom) {
      throw new UsageError(`${command}: give --publish, --subscribe or --subscribe-room`);
    }
    const patch = {
      ...(publish !== undefined && { publish_streams: publish }),
      ...(subscribe !== undefined && { subscribe_streams: subscribe }),
      ...(subscribeRoom && { subscribe_room: true }),
    };
    const body = await viaAppClient(appClient(command, values, io), (client) => client.updateParticipant(roomId, participant, patch));
    print(io, values['json'] === true, body, () => ['permissions changed', ...participantLines(body)]);
    return 0;
  },
};

async function loadTest(args: readonly string[], io: ClientIO): Promise<number> {
  const { values } = parseCommand('load-test', args, {
    ...APP_FLAGS, ...JSON_FLAG, room: { type: 'string' }, publishers: { type: 'string' }, subscribers: { type: 'string' },
    duration: { type: 'string' }, 'video-bitrate': { type: 'string' }, audio: { type: 'string' }, simulcast: { type: 'boolean' },
  }, 0);
  // werift and the media client load only for this command: the others start quickly
  const { loadTestSettings, runLoadTest } = await import('./load-test.ts');
  const settings = loadTestSettings(values);
  return runLoadTest(settings, io, appClient('load-test', values, io));
}

export const CLIENT_COMMANDS: Readonly<Record<string, (args: readonly string[], io: ClientIO) => Promise<number>>> = {
  login, logout, projects, credentials, token, rooms, grant, webhooks, 'load-test': loadTest,
};
