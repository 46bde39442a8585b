import { buildOpenApiDocument, serializeOpenApiDocument } from '../../server/src/openapi/document.ts';
import { renderApiMarkdown } from './markdown.ts';

/** Where the generated reference is committed, relative to the repository root. */
export const REFERENCE_FILES = {
  openapi: 'docs/reference/openapi.json',
  markdown: 'docs/reference/api.md',
} as const;

/** The committed reference files' contents, freshly generated from the operation records. */
export function generateReference(): Record<keyof typeof REFERENCE_FILES, string> {
  const doc = buildOpenApiDocument();
  return { openapi: serializeOpenApiDocument(doc), markdown: renderApiMarkdown(doc) };
}
