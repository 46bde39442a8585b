import { idParam, type ErrorSpec, type Operation } from './registry.ts';

/** The path parameter of a project's operations. */
export const projectId = { id: idParam('project id (prj_…); another account\'s project is 404') };
/** What a JSON body too large or of another type answers. */
export const BODY_ERRORS = [[413, 'invalid_request'], [415, 'invalid_request']] as const;

/** What a console operation declares: its host, authentication and the errors they imply are added. */
export type ConsoleOperationSpec = Omit<Operation, 'hosts' | 'auth' | 'errors'> & {
  /** The errors of the operation's own checks. */
  readonly errors?: readonly ErrorSpec[];
};

/** A console operation as registered: on the api host, with the console session's Bearer token. */
export type ConsoleOperation<S extends ConsoleOperationSpec> = S & {
  readonly hosts: readonly ['api'];
  readonly auth: 'bearer';
  readonly errors: readonly ErrorSpec[];
};

/**
 * An operation of the console's session (docs/console.md) on the api host. Its errors start with those
 * every such operation shares: a query or body that fails its schema (400), a body too large or not
 * JSON (413, 415), no valid session (401), and an id of the path that names nothing of the account (404).
 */
export function consoleOperation<const S extends ConsoleOperationSpec>(spec: S): ConsoleOperation<S> {
  const errors: ErrorSpec[] = [];
  if (spec.body || spec.query) errors.push('invalid_request');
  if (spec.body) errors.push(...BODY_ERRORS);
  errors.push('unauthenticated');
  if (spec.pathParams) errors.push('not_found');
  return { ...spec, hosts: ['api'], auth: 'bearer', errors: [...errors, ...(spec.errors ?? [])] };
}
