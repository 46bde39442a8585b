import { MAX_SUBSCRIBE_STREAMS, type RtcVideoPreference } from '@rtc/protocol';

/**
 * The most `rtc_video` bounds a session keeps (docs/protocol/media.md, "Layers"): twice the streams
 * a grant may name, so that every stream a session can receive has room, plus bounds set ahead.
 */
export const MAX_VIDEO_PREFERENCES = 2 * MAX_SUBSCRIBE_STREAMS;

/**
 * The bounds a client set with `rtc_video` on the video it receives, by stream id. They may name a
 * stream before it exists, and last for the session; past MAX_VIDEO_PREFERENCES the bound of a
 * stream not in the room goes first, else the one set longest ago, so that a client naming ever new
 * stream ids cannot grow the session's memory.
 */
export class VideoPreferences {
  private readonly byStream = new Map<number, RtcVideoPreference>();

  get(streamId: number): RtcVideoPreference | undefined {
    return this.byStream.get(streamId);
  }

  get size(): number {
    return this.byStream.size;
  }

  /** Keeps `preference`; `inRoom` tells which streams exist now. */
  set(preference: RtcVideoPreference, inRoom: (streamId: number) => boolean): void {
    // set again: the most recent
    this.byStream.delete(preference.stream_id);
    this.byStream.set(preference.stream_id, preference);
    if (this.byStream.size <= MAX_VIDEO_PREFERENCES) return;
    const gone = [...this.byStream.keys()].find((id) => id !== preference.stream_id && !inRoom(id));
    this.byStream.delete(gone ?? this.byStream.keys().next().value!);
  }
}
