import { isIP } from 'node:net';
import {
  RTCRtpHeaderExtensionParameters, useFIR, usePLI, useOPUS, useSdesMid, useSdesRTPStreamId, useTransportWideCC, useVP8, type PeerConfig,
} from 'werift';
import type { RtcOptions } from '../../config.ts';
import { createAddressSet } from '../../core/address.ts';

export type { RtcOptions };

/** The header extension that tells a receiver how long to hold frames at least and at most (docs/protocol/media.md, "Bandwidth"). */
export const PLAYOUT_DELAY_URI = 'http://www.webrtc.org/experiments/rtp-hdrext/playout-delay';

/**
 * The peer configuration of every server-side peer connection: Opus and VP8 only (the encrypted
 * frame layout is defined for them), key frame requests, no RTX, so that forwarded packets keep their
 * meaning; the mid, rid, transport-wide sequence number and playout delay header extensions; no STUN server (the
 * server's own addresses are the candidates). NACK and transport-cc feedback are the server's own
 * (uplink.ts, downlink.ts) and are added to the answer by sdp.ts, so that werift's do not run too.
 * With `RTC_MEDIA_ICE_ADDRESSES` the sockets are bound to those addresses, not to every interface.
 */
export function peerConfig(options: RtcOptions): Partial<PeerConfig> {
  const only = options.addresses.length > 0;
  const loopback = options.includeLoopback ? ['127.0.0.1'] : [];
  const v4 = options.addresses.find((a) => isIP(a) === 4);
  const v6 = options.addresses.find((a) => isIP(a) === 6);
  return {
    codecs: {
      audio: [useOPUS({ rtcpFeedback: [] })],
      video: [useVP8({ rtcpFeedback: [usePLI(), useFIR()] })],
    },
    headerExtensions: {
      audio: [useSdesMid(), useTransportWideCC()],
      video: [useSdesMid(), useSdesRTPStreamId(), useTransportWideCC(), new RTCRtpHeaderExtensionParameters({ uri: PLAYOUT_DELAY_URI })],
    },
    iceServers: [],
    icePortRange: options.portRange ? [options.portRange[0], options.portRange[1]] : undefined,
    iceAdditionalHostAddresses: only ? [...options.addresses] : loopback,
    iceInterfaceAddresses: only ? { ...(v4 ? { udp4: v4 } : {}), ...(v6 ? { udp6: v6 } : {}) } : undefined,
    iceUseIpv4: !only,
    iceUseIpv6: !only && options.ipv6,
    bundlePolicy: 'max-bundle',
    // docs/operations/configuration.md, "Peer addresses": the stack's one choke point, for every
    // candidate of an offer, once an mDNS name is resolved
    iceFilterCandidatePair: (pair) => peerAddressesOf(options).mayCheck(pair.remoteCandidate.host),
  };
}

/** What a node checks of the addresses of its peer connections, from its options. */
export interface PeerAddresses {
  /**
   * Whether the node may send connectivity checks to a candidate at `address` (docs/operations/configuration.md,
   * "Peer addresses"): an IP address the policy allows; never a host name, which the system would resolve unchecked.
   */
  mayCheck(address: string): boolean;
  /** Whether an offer's candidate at `address` goes to the stack: one the node may check, or an mDNS `.local` name (checked once resolved). */
  mayOffer(address: string): boolean;
  /** Whether `address` is one of the platform's TURN relay addresses (docs/console.md, "Usage kind of a session"). */
  isTurnRelay(address: string): boolean;
}

const peerAddresses = new WeakMap<RtcOptions, PeerAddresses>();

/** The address checks of `options`, built once per options object. */
export function peerAddressesOf(options: RtcOptions): PeerAddresses {
  let checks = peerAddresses.get(options);
  if (!checks) {
    const denied = createAddressSet(options.peers.denied);
    const allowed = createAddressSet(options.peers.allowed);
    const relays = createAddressSet(options.turnRelays);
    const mayCheck = (address: string): boolean => isIP(address) !== 0 && (allowed.has(address) || !denied.has(address));
    checks = {
      mayCheck,
      // werift resolves a name containing ".local" by mDNS and pairs its answer, which mayCheck then weighs
      mayOffer: (address) => mayCheck(address) || /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.local$/i.test(address),
      isTurnRelay: (address) => relays.has(address),
    };
    peerAddresses.set(options, checks);
  }
  return checks;
}
