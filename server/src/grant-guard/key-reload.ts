/** The outcome of a token check: `unknownKey` when it failed only because the token names a key this process lacks. */
export type KeyedCheck = { readonly ok: true } | { readonly ok: false; readonly unknownKey?: true | undefined };

/**
 * Runs a token check, and once more after a (throttled) reload of the key ring when it failed only
 * because the token names a key this process does not know: another node may already sign with a
 * key rotated in (docs/operations/configuration.md, "Keys"). `stillWanted` is asked before each
 * step that follows an await: a connection closed meanwhile needs no answer.
 */
export async function checkWithKeyReload<C extends KeyedCheck>(
  check: () => Promise<C>,
  reload: (() => Promise<boolean>) | undefined,
  stillWanted: () => boolean = () => true,
): Promise<C> {
  const first = await check();
  const outcome: KeyedCheck = first;
  if (outcome.ok || !outcome.unknownKey || !reload || !stillWanted()) return first;
  const loaded = await reload();
  return loaded && stillWanted() ? check() : first;
}
