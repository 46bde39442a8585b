/** The Node WebRTC client of the media role, where the tests have always found it (server/src/main/client/media/rtc-client.ts). */
export * from '../../server/src/main/client/media/rtc-client.ts';
export * from '../../server/src/main/client/media/loopback-peer.ts';
export { RtcClient as RtcTestClient } from '../../server/src/main/client/media/rtc-client.ts';
export { rtcCodecs as testCodecs } from '../../server/src/main/client/media/loopback-peer.ts';
