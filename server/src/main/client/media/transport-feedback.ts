/**
 * Transport-wide congestion control for Node clients of the media role (docs/protocol/media.md,
 * section 10.5): the header extensions a browser offers, and the feedback a browser sends, without
 * which the server's estimate of a subscriber's downlink never grows past its start.
 */
import { randomBytes } from 'node:crypto';
import { RTP_EXTENSION_URI, useSdesMid, useSdesRTPStreamId, useTransportWideCC, type PeerConfig } from 'werift';
import { TwccRecorder } from '../../../media/rtp/twcc-feedback.ts';
import type { RtcClient } from './rtc-client.ts';

/** A subscriber's transport-wide feedback interval. */
export const FEEDBACK_MS = 50;

/**
 * werift settings: the MID and transport-wide sequence number extensions on both kinds, as browsers
 * offer them. One instance of each for both kinds: werift numbers the instances it is given, and a
 * bundle's m-lines must give an extension one id. With `simulcast`, the RID extension on video too,
 * which simulcast layers carry (docs/protocol/media.md, section 10.4).
 */
export function feedbackPeerConfig(options: { readonly simulcast?: boolean } = {}): Partial<PeerConfig> {
  const mid = useSdesMid();
  const transportSeq = useTransportWideCC();
  const video = options.simulcast ? [mid, useSdesRTPStreamId(), transportSeq] : [mid, transportSeq];
  return { headerExtensions: { video, audio: [mid, transportSeq] } };
}

/**
 * Transport-wide congestion control feedback from a receiving client, as a browser sends it: the
 * arrival time of every RTP packet of its connection, by transport-wide sequence number, reported
 * every FEEDBACK_MS with the server's own feedback builder. werift's own (with transport-cc in the
 * offer's rtcp-fb, which is why the offer leaves it out) reports each m-line apart, so one sequence
 * across the bundle reads as lost packets, and leaves messages of an unaligned length unpadded,
 * which the server drops as malformed. Call once the peer connection is connected (the client must
 * have joined with `feedbackPeerConfig`); returns a function that stops it.
 */
export function sendTransportFeedback(client: RtcClient): () => void {
  const transport = client.pc.dtlsTransports[0];
  const id = client.pc.getTransceivers().flatMap((t) => t.headerExtensions).find((e) => e.uri === RTP_EXTENSION_URI.transportWideCC)?.id;
  if (!transport || id === undefined) throw new Error('the client has no transport-wide sequence numbers');
  const recorder = new TwccRecorder(randomBytes(4).readUInt32BE(0));
  let mediaSsrc = 0;
  const { unSubscribe } = transport.onRtp.subscribe((rtp) => {
    mediaSsrc = rtp.header.ssrc;
    const seq = rtp.header.extensions.find((e) => e.id === id)?.payload;
    if (seq && seq.length >= 2) recorder.record(seq.readUInt16BE(0), Math.round(performance.now() * 1000));
  });
  const timer = setInterval(() => {
    const packets = recorder.build(mediaSsrc);
    if (packets.length > 0 && transport.state === 'connected') transport.sendRtcp(packets).catch(() => undefined);
  }, FEEDBACK_MS);
  return () => {
    clearInterval(timer);
    unSubscribe();
  };
}
