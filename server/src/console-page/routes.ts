import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { servedHere } from '../http/operation-route.ts';
import type { Host } from '../http/registry.ts';

/**
 * The console web page (docs/console.md), built by Vite into dist/console and served by the api
 * role at `/`. It is a client of the public customer API on the same origin, nothing more; these
 * routes are pages, not API operations, so the OpenAPI document leaves them out.
 */
export const CONSOLE_ROUTES = ['GET /', 'GET /assets/*', 'GET /favicon.svg', 'GET /favicon.ico'] as const;

/** The hosts that serve the console page. */
export const CONSOLE_HOSTS: readonly Host[] = ['api'];

/**
 * The page may load only its own scripts and styles, talk to its own origin and to media servers
 * over WebSocket, and run the SDK's encryption worker from a Blob URL; nobody may frame it.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self' ws: wss:",
  "media-src 'self' blob: mediastream:", "worker-src blob:", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'",
].join('; ');

/** dist/console, from the sources (server/src/console-page) or from the build (dist/server/src/console-page). */
function consoleDir(): string | undefined {
  const built = import.meta.url.includes('/dist/server/');
  const dir = fileURLToPath(new URL(built ? '../../../console/' : '../../../dist/console/', import.meta.url));
  return existsSync(`${dir}index.html`) ? dir : undefined;
}

export function registerConsoleRoutes(app: FastifyInstance): void {
  if (!servedHere(app, CONSOLE_HOSTS)) return;
  const dir = consoleDir();
  const headers = (reply: { header(name: string, value: string): unknown }): void => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
  };
  if (!dir) {
    app.get('/', async (_req, reply) => {
      headers(reply);
      return reply.code(404).type('text/plain; charset=utf-8').send('The console is not built: run npm run build.\n');
    });
    return;
  }
  const index = readFileSync(`${dir}index.html`);
  app.get('/', async (_req, reply) => {
    headers(reply);
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
  });
  // the page links /favicon.svg; /favicon.ico is what browsers and tools ask for when nothing says
  const icon = existsSync(`${dir}favicon.svg`) ? readFileSync(`${dir}favicon.svg`) : undefined;
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    app.get(path, async (_req, reply) => {
      headers(reply);
      if (!icon) return reply.code(404).type('text/plain; charset=utf-8').send('no icon\n');
      return reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(icon);
    });
  }
  // file names carry a content hash: cached for good. @fastify/static is loaded only by the role that
  // serves the page (docs/operations/benchmarks.md, token issuance); fastify awaits the plugin before listening.
  void app.register(async (scope) => scope.register((await import('@fastify/static')).default, {
    root: `${dir}assets`, prefix: '/assets/', index: false, list: false, dotfiles: 'deny', immutable: true, maxAge: '365d',
    setHeaders: (res) => {
      res.header('content-security-policy', CONTENT_SECURITY_POLICY);
      res.header('x-content-type-options', 'nosniff');
      res.header('referrer-policy', 'no-referrer');
    },
  }));
}
