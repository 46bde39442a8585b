/**
 * Hash routes (docs/console.md, "Pages"): each page has its own URL, a reload stays on it, and the
 * server only ever serves `/`. `#/signin?next=/projects/prj_…/rooms` brings a tab signed in again
 * back to the page it was on.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  readonly parts: readonly string[];
  readonly query: URLSearchParams;
  /** The path part of the hash: `/projects/prj_…/rooms`. */
  readonly path: string;
}

function read(): Route {
  const hash = location.hash.replace(/^#/, '');
  const at = hash.indexOf('?');
  const path = at === -1 ? hash : hash.slice(0, at);
  return { parts: path.split('/').filter(Boolean), query: new URLSearchParams(at === -1 ? '' : hash.slice(at + 1)), path: path || '/' };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = (): void => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function navigate(path: string): void {
  location.hash = `#${path}`;
}

/** A page path a sign-in may return to: only the console's own routes, nothing that could leave the page. */
const RETURNABLE = /^\/(projects|account|pricing|inspect)(\/[A-Za-z0-9_-]+)*$/;

export function returnPath(query: URLSearchParams): string {
  const next = query.get('next') ?? '';
  return RETURNABLE.test(next) ? next : '/projects';
}

/** The sign-in page's path, remembering `from` when it is a page worth coming back to. */
export function signInPath(from: string): string {
  return RETURNABLE.test(from) && from !== '/projects' ? `/signin?next=${encodeURIComponent(from)}` : '/signin';
}

/** Project ids as the API gives them; anything else in the hash is not put into an API path. */
export const PROJECT_ID = /^prj_[A-Za-z0-9_-]{1,64}$/;

/** The pages of a project, in the side navigation's order: path segment and title. */
export const PROJECT_PAGES = [
  ['', 'Overview'],
  ['credentials', 'Credentials'],
  ['rooms', 'Rooms'],
  ['usage', 'Sessions and usage'],
  ['webhooks', 'Webhooks'],
  ['test-room', 'Test room'],
  ['inspect', 'Grant inspector'],
] as const;

export type ProjectPageId = (typeof PROJECT_PAGES)[number][0];

export function isProjectPage(segment: string): segment is ProjectPageId {
  return PROJECT_PAGES.some(([id]) => id === segment);
}
