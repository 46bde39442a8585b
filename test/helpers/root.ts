import { fileURLToPath } from 'node:url';

/** The repository's root directory (ends with a slash). */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
