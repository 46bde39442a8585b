/**
 * Throws a TypeError when the code runs in a browser (a `window` or `document` global exists).
 * The App Secret must never reach a client (docs/sdk/server.md, "Not in a browser"), so there is no way to opt out.
 *
 * @example
 * ```ts
 * assertServerRuntime(); // throws in a browser, returns in Node.js, Deno, Bun or a worker runtime
 * ```
 */
export function assertServerRuntime(): void {
  const scope = globalThis as { readonly window?: unknown; readonly document?: unknown };
  if (scope.window !== undefined || scope.document !== undefined) {
    throw new TypeError(
      'TokenClient runs only on a server: the App Secret must never reach a browser. ' +
        "Call the token API from your own backend and hand the app only the token response's media credentials.",
    );
  }
}
