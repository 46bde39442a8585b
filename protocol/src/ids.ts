/** Identifier prefixes (docs/reference/token-api.md, "Identifiers"). */
export const ID_PREFIX = {
  project: 'prj_',
  app: 'app_',
  secret: 'sk_',
  handle: 'rvk_',
  session: 'cs_',
  refresh: 'rt_',
  account: 'acc_',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/**
 * The user ids of share-link guests (docs/console.md, "Share links"): `guest_` and 22 random
 * characters, chosen by the platform. No other token may name a user id with this prefix.
 */
export const GUEST_USER_PREFIX = 'guest_';

const ID_PATTERN: Readonly<Record<'project' | 'app' | 'account', RegExp>> = {
  project: /^prj_[A-Za-z0-9_-]{22}$/,
  app: /^app_[A-Za-z0-9_-]{22}$/,
  account: /^acc_[A-Za-z0-9_-]{22}$/,
};

export function isId(kind: 'project' | 'app' | 'account', value: string): boolean {
  return ID_PATTERN[kind].test(value);
}
