/** The token and room commands' client: the server SDK's TokenClient, its failures reported as the CLI's own client reports them. */
import { isId } from '@rtc/protocol';
import { TokenApiError, TokenClient, TokenNetworkError, TokenResponseError } from '@rtc/server-sdk';
import { INVALID_CREDENTIALS_MESSAGE } from '../../core/errors.ts';
import { ApiResponseError, CommandError } from './http.ts';

/** One attempt of up to 30 s, as the CLI's other calls: a person at a terminal retries. */
const TIMEOUT_MS = 30_000;

/**
 * A TokenClient for the credential given on the command line. The CLI talks to any URL it is
 * given, plain http included, as its other commands do.
 */
export function createAppClient(baseUrl: string, appId: string, appSecret: string): TokenClient {
  // an App ID of no possible credential: the API would refuse it with its one answer for every
  // cause (docs/reference/token-api.md, "authentication"), which the SDK does not send for
  if (!isId('app', appId)) throw new ApiResponseError(401, 'invalid_credentials', INVALID_CREDENTIALS_MESSAGE);
  try {
    return new TokenClient({
      baseUrl, appId, appSecret, allowInsecureHttp: true, timeoutMs: TIMEOUT_MS, retry: { maxAttempts: 1, maxElapsedMs: TIMEOUT_MS },
    });
  } catch (err) {
    if (err instanceof TypeError) throw new CommandError(err.message);
    throw err;
  }
}

/** Runs a TokenClient call; its failures become `<code>: <message>` and `cannot reach <origin>: <cause>`, exit code 1. */
export async function viaAppClient<T>(client: TokenClient, call: (client: TokenClient) => Promise<T>): Promise<T> {
  try {
    return await call(client);
  } catch (err) {
    if (err instanceof TokenApiError) throw new ApiResponseError(err.status, err.code, err.serverMessage);
    if (err instanceof TokenResponseError) throw new ApiResponseError(err.status, `http_${err.status}`, err.message);
    if (err instanceof TokenNetworkError) {
      // the fetch failure, and the system error under it (ECONNREFUSED, ENOTFOUND, ...)
      const failure = err.cause as { message?: string; cause?: { code?: string; message?: string } } | undefined;
      const cause = failure?.cause;
      throw new CommandError(`cannot reach ${new URL(client.baseUrl).origin}: ${cause?.code ?? cause?.message ?? failure?.message ?? err.message}`);
    }
    throw err;
  }
}
