/** The raw media protocol client, where the tests have always found it (server/src/main/client/media/wire-client.ts). */
export * from '../../server/src/main/client/media/wire-client.ts';
