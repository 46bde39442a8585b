/**
 * Every route the HTTP roles and the signaling app register, enumerated by building each app once
 * on a scratch SQLite store, for the OpenAPI tests (openapi.test.ts, openapi-document.test.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createMemoryBus } from '../../server/src/bus/memory.ts';
import { fixedKeyRing } from '../../server/src/core/keyring.ts';
import { createPasswordHasher } from '../../server/src/core/password.ts';
import type { HttpContext } from '../../server/src/http/context.ts';
import type { Host } from '../../server/src/http/registry.ts';
import { loadKeyRing } from '../../server/src/keys/file-keyring.ts';
import { createMemoryLimiter } from '../../server/src/limiter/memory.ts';
import { createHttpApp, type HttpRole } from '../../server/src/main/http-app.ts';
import { createSignalingApp } from '../../server/src/signaling/app.ts';
import { createSignalingService } from '../../server/src/signaling/service.ts';
import { defaultSignalingSettings } from '../../server/src/signaling/settings.ts';
import type { Store } from '../../server/src/store/port.ts';
import { createSqliteStore } from '../../server/src/store/sqlite.ts';

const HTTP_ROLES: readonly HttpRole[] = ['api', 'token'];
/** The hosts whose routes are fastify apps, enumerated and compared with the document. */
export const ROUTED_HOSTS: readonly Host[] = [...HTTP_ROLES, 'signaling'];

/** `:id` → `{id}`: fastify's route form to the document's. */
const openApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Whether a served route, as `METHOD /path` (fastify's trailing `*` a wildcard), answers a documented one. */
export const answers = (served: string, documented: string): boolean =>
  (served.endsWith('*') ? documented.startsWith(served.slice(0, -1)) : served === documented);

/**
 * Every route each HTTP role and the signaling app register, as `METHOD /path` (HEAD routes are
 * fastify's automatic twins of GET; the signaling app has none).
 */
export async function registeredRoutes(): Promise<Map<Host, Set<string>>> {
  const dir = mkdtempSync(join(tmpdir(), 'rtc-openapi-'));
  const nowMs = Date.now();
  const store = createSqliteStore(join(dir, 'rtc.sqlite'));
  const bus = createMemoryBus(() => undefined);
  const ctx: HttpContext<Store> = {
    deps: { store, limiter: createMemoryLimiter(), bus, clock: { nowMs: () => Date.now() }, keys: fixedKeyRing(loadKeyRing(dir, Math.floor(nowMs / 1000))),
      passwords: createPasswordHasher(), events: { record: async () => {} } },
    issuer: { issuer: 'rtc-platform', sfuHost: 'localhost', sfuPort: 7880 },
    limits: { appPerMinute: 1200, addressPerMinute: 2400 },
    trustProxy: undefined,
  };
  const routes = new Map<Host, Set<string>>();
  const recorder = (seen: Set<string>) => (route: { readonly method: string | string[]; readonly url: string }): void => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') seen.add(`${method} ${openApiPath(route.url)}`);
  };
  try {
    for (const role of HTTP_ROLES) {
      const seen = new Set<string>();
      const app = createHttpApp(ctx, { role, logger: pino({ level: 'silent' }), onRoute: recorder(seen) });
      await app.ready();
      await app.close();
      routes.set(role, seen);
    }
    const seen = new Set<string>();
    const service = createSignalingService(ctx.deps, defaultSignalingSettings(ctx.issuer.issuer));
    const signaling = createSignalingApp(service, { logger: pino({ level: 'silent' }), onRoute: recorder(seen) });
    try {
      await signaling.app.ready();
    } finally {
      service.close();
      signaling.endStreams();
      await signaling.app.close();
    }
    routes.set('signaling', seen);
  } finally {
    await bus.close();
    await store.close();
  }
  return routes;
}
