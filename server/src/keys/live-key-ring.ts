import type { KeyRing, LiveKeyRing } from '../core/keyring.ts';
import type { Clock } from '../core/ports.ts';
import { buildKeyRing } from './key-document.ts';
import type { KeyRingSource, VersionedKeyDocument } from './key-ring-source.ts';

/** How often a process looks for a rotation made elsewhere, unless told otherwise. */
export const KEY_RELOAD_INTERVAL_MS = 30_000;
/** Reloads asked for by unknown key ids start at most this often. */
export const UNKNOWN_KEY_RELOAD_GAP_MS = 1000;

export interface LiveKeyRingOptions {
  readonly clock: Clock;
  /** Between two periodic looks at the stored ring (default `KEY_RELOAD_INTERVAL_MS`). */
  readonly reloadIntervalMs?: number | undefined;
  /** A newer ring was loaded. */
  readonly onReloaded?: ((ring: KeyRing, version: number) => void) | undefined;
  /** A reload failed or was refused; the ring loaded before stays in force. */
  readonly onError?: ((err: unknown) => void) | undefined;
}

const nowSec = (clock: Clock): number => Math.floor(clock.nowMs() / 1000);
// not unref'd: a caller may be waiting for the gap to pass (it holds a process open for a second at most)
const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A `LiveKeyRing` over a source, starting from `initial`. Reloads run one at a time (a slow read
 * can never put an older ring back over a newer one). A periodic reload also drops keys whose
 * retirement time has passed. A ring whose secret-hash or handle key differs from the one in force
 * is refused: App Secret hashes and revocation handles depend on them, and rotation never changes them.
 */
export function openLiveKeyRing(source: KeyRingSource, initial: VersionedKeyDocument, options: LiveKeyRingOptions): LiveKeyRing {
  let version = initial.version;
  let ring = buildKeyRing(initial.document, nowSec(options.clock), source.where);
  let closed = false;

  // the one reload running, if any: the next waits for it
  let chain: Promise<unknown> = Promise.resolve();
  const reload = (): Promise<boolean> => {
    const run = chain.then(async () => {
      if (closed) return false;
      const stored = await source.read();
      if (!stored) throw new Error(`${source.where} is gone; the keys loaded before stay in force`);
      const now = nowSec(options.clock);
      const retiring = ring.verifying.some((k) => k.retireAt !== undefined && k.retireAt <= now);
      if (stored.version === version && !retiring) return false;
      const next = buildKeyRing(stored.document, now, source.where);
      if (!next.secretHashKey.equals(ring.secretHashKey) || !next.handleKey.equals(ring.handleKey)) {
        throw new Error(`${source.where} has another secret-hash or handle key than this process; refused (restart to take it)`);
      }
      const newer = stored.version !== version;
      ring = next;
      version = stored.version;
      if (newer) options.onReloaded?.(ring, version);
      return newer;
    }).catch((err: unknown) => {
      options.onError?.(err);
      return false;
    });
    chain = run;
    return run;
  };

  // unknown key ids: callers share the next reload that starts after they asked; starts are at
  // least UNKNOWN_KEY_RELOAD_GAP_MS apart
  let waiting: Promise<boolean> | undefined;
  let gate: Promise<unknown> = Promise.resolve();
  const reloadForUnknownKey = (): Promise<boolean> => {
    if (closed) return Promise.resolve(false);
    waiting ??= gate.then(() => {
      waiting = undefined;
      const started = reload();
      gate = Promise.all([started, delay(UNKNOWN_KEY_RELOAD_GAP_MS)]);
      return started;
    });
    return waiting;
  };

  let ticking = false;
  const timer = setInterval(() => {
    if (ticking) return;
    ticking = true;
    void reload().finally(() => {
      ticking = false;
    });
  }, options.reloadIntervalMs ?? KEY_RELOAD_INTERVAL_MS);
  timer.unref();

  return {
    get signing() { return ring.signing; },
    get verifying() { return ring.verifying; },
    get verifyingByKid() { return ring.verifyingByKid; },
    get mediaMaster() { return ring.mediaMaster; },
    get mediaMasters() { return ring.mediaMasters; },
    get secretHashKey() { return ring.secretHashKey; },
    get handleKey() { return ring.handleKey; },
    reloadForUnknownKey,
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
