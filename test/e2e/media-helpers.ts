/** The media session helpers, where the tests of test/http import them from. */
export {
  TcpProxy, TokenIssuer, collectFrames, join, nextEvent, sleep, text, until, waitPastExpiry, websocketPayloads, type TokenBody,
} from '../helpers/media-session.ts';
